/**
 * The keyboard: key events on the active tab, chords with their modifiers
 * held, and text typed key by key or inserted in runs (`typingPlan` in
 * `_typing.ts` says which).
 *
 * @module
 */
import type { CdpSession } from "../cdp/connection.ts";
import type { Modifier } from "./action.ts";
import { type KeyDefinition, keyDefinition, modifierMask } from "./_keys.ts";
import { typingPlan } from "./_typing.ts";

/** Sends key events and text to the focused element of the active tab. */
export class Keyboard {
  #session: () => CdpSession;
  #timeoutMs: number;

  /**
   * Creates the keyboard of one actor.
   *
   * @param session the active tab's session, asked for at each event (it
   *   throws when no tab is open)
   * @param timeoutMs the timeout of every browser command
   */
  constructor(session: () => CdpSession, timeoutMs: number) {
    this.#session = session;
    this.#timeoutMs = timeoutMs;
  }

  async #key(definition: KeyDefinition, mask: number, down: boolean): Promise<void> {
    const session = this.#session();
    // Control, Alt and Meta chords type nothing; Shift types the shifted text.
    const types = definition.text !== undefined && (mask & 0b111) === 0;
    const text = types && (mask & 8) && /^[a-z]$/.test(definition.text!)
      ? definition.text!.toUpperCase()
      : definition.text;
    await session.send("Input.dispatchKeyEvent", {
      type: down ? (types ? "keyDown" : "rawKeyDown") : "keyUp",
      key: text !== undefined && types && text.length === 1 ? text : definition.key,
      code: definition.code,
      windowsVirtualKeyCode: definition.keyCode,
      nativeVirtualKeyCode: definition.keyCode,
      modifiers: mask,
      ...(down && types && text !== undefined ? { text, unmodifiedText: text } : {}),
      ...(definition.location !== undefined ? { location: definition.location } : {}),
    }, { timeoutMs: this.#timeoutMs });
  }

  /** Presses `key` with `modifiers` held; the modifiers are released whatever happens. */
  async chord(modifiers: Modifier[], key: KeyDefinition): Promise<void> {
    const held: Modifier[] = [];
    try {
      for (const modifier of modifiers) {
        held.push(modifier);
        await this.#key(keyDefinition(modifier)!, modifierMask(held), true);
      }
      const mask = modifierMask(modifiers);
      await this.#key(key, mask, true);
      await this.#key(key, mask, false);
    } finally {
      while (held.length > 0) {
        const modifier = held.pop()!;
        await this.#key(keyDefinition(modifier)!, modifierMask(held), false);
      }
    }
  }

  /** Types text into the focused field: key by key when short, inserted in runs when long. */
  async typeText(text: string): Promise<void> {
    const session = this.#session();
    for (const step of typingPlan(text)) {
      const definition = "key" in step
        ? step.key === "\n" ? keyDefinition("Enter") : keyDefinition(step.key)
        : undefined;
      if (definition) {
        await this.#key(definition, 0, true);
        await this.#key(definition, 0, false);
      } else {
        const insert = "key" in step ? step.key : step.insert;
        await session.send("Input.insertText", { text: insert }, { timeoutMs: this.#timeoutMs });
      }
    }
  }
}
