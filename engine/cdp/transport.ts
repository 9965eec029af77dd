/**
 * The transport under the CDP connection: it carries messages and reports the
 * close, nothing more. The connection does ids, sessions and errors.
 *
 * @module
 */

/** A command as the connection sends it, before serialisation. */
export interface OutgoingMessage {
  /** Unique per connection. */
  id: number;
  /** The CDP method, such as `"Page.navigate"`. */
  method: string;
  /** The command's parameters. */
  params?: Record<string, unknown>;
  /** The flat session the command is for; absent for the browser. */
  sessionId?: string;
}

/**
 * Carries CDP messages between the connection and a browser.
 *
 * A transport delivers each incoming message to `onmessage` as it arrived,
 * either as the raw JSON text or as an already-parsed value; the connection
 * decodes both. It calls `onclose` once, when it can carry nothing more.
 */
export interface Transport {
  /** Sends one command. Never throws for a closed transport; reports it via `onclose`. */
  send(message: OutgoingMessage): void;
  /** Closes the transport; `onclose` is called once it is closed. */
  close(): void;
  /** Set by the connection: receives every incoming message. */
  onmessage: ((message: unknown) => void) | undefined;
  /** Set by the connection: called once when the transport has closed. */
  onclose: ((reason: string) => void) | undefined;
}
