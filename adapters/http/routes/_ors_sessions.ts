/**
 * ORS session ids and the WebServ sessions behind them. A session closed
 * behind ORS's back (reaped, closed over `/v1`) keeps a small entry, so its
 * next call is `expired` (`{ok: false}`), not an unknown id; the oldest
 * such entries go past {@linkcode TOMBSTONES} (a client that never deletes).
 *
 * @module
 */
import { HttpError } from "../http_error.ts";
import type { SessionCreated } from "../protocol.ts";
import type { SessionManager } from "../sessions.ts";

/** How many ORS ids of sessions closed without `/delete` are remembered. */
export const TOMBSTONES = 1000;

/** One ORS session: the WebServ session behind it and what its prompt is. */
export interface OrsEntry {
  /** The WebServ session's id. */
  readonly id: string;
  /** The task's instruction. */
  readonly instruction: string;
  /** The first observation's text. */
  readonly firstText: string;
}

/** The ORS sessions of one server. */
export class OrsSessions {
  #sessions: SessionManager;
  #bySid = new Map<string, OrsEntry>();
  #sidById = new Map<string, string>();
  #closed = new Set<string>();

  /** @param sessions the server's sessions, whose closes are followed */
  constructor(sessions: SessionManager) {
    this.#sessions = sessions;
    sessions.subscribe((event) => {
      if (event.type === "closed") this.#closedBehind(event.session);
    });
  }

  /**
   * Whether an ORS id is known (open, or closed behind ORS's back).
   *
   * @param sid the ORS id
   * @returns whether it is known
   */
  has(sid: string): boolean {
    return this.#bySid.has(sid);
  }

  /**
   * The entry of an ORS id.
   *
   * @param sid the ORS id
   * @returns its entry
   * @throws {HttpError} 404 for an id never created or deleted
   */
  entry(sid: string): OrsEntry {
    const found = this.#bySid.get(sid);
    if (!found) {
      throw new HttpError(
        404,
        "unknown-ors-session",
        `No ORS session "${sid}": POST /create with this X-Session-ID first`,
      );
    }
    return found;
  }

  /**
   * Keys a WebServ session by an ORS id; the later of two concurrent
   * creates for one id is closed and refused.
   *
   * @param sid the ORS id
   * @param created the session opened for it
   * @throws {HttpError} 409 when the id has a session already
   */
  async bind(sid: string, created: SessionCreated): Promise<void> {
    if (this.#bySid.has(sid)) {
      await this.#sessions.close(created.id);
      throw new HttpError(409, "session-exists", `ORS session "${sid}" already exists`);
    }
    this.#sidById.set(created.id, sid);
    this.#bySid.set(sid, {
      id: created.id,
      instruction: created.task?.instruction ?? "",
      firstText: created.observation.text,
    });
  }

  /**
   * Forgets an ORS id and closes its session.
   *
   * @param sid the ORS id
   * @returns the id, as ORS answers it
   */
  async close(sid: string): Promise<{ sid: string }> {
    const found = this.#bySid.get(sid);
    this.#bySid.delete(sid);
    this.#closed.delete(sid);
    if (found && this.#sidById.delete(found.id)) await this.#sessions.close(found.id);
    return { sid };
  }

  #closedBehind(id: string): void {
    const sid = this.#sidById.get(id);
    if (sid === undefined) return;
    this.#sidById.delete(id);
    this.#bySid.set(sid, { id, instruction: "", firstText: "" });
    this.#closed.add(sid);
    for (const old of this.#closed) {
      if (this.#closed.size <= TOMBSTONES) break;
      this.#closed.delete(old);
      this.#bySid.delete(old);
    }
  }
}
