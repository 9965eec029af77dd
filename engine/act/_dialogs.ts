/**
 * The JavaScript dialogs of an actor's tabs: each is answered by the policy
 * at once, or, when the policy says `ask`, held open until the agent answers
 * it; whoever waits for the next held dialog is woken when it opens.
 *
 * @module
 */
import { bestEffort, logFailure } from "../log.ts";
import type { Page } from "../browser/page.ts";
import type { EventParams } from "../cdp/protocol.ts";
import { ActionError } from "./errors.ts";

/** The kinds of JavaScript dialog. */
export type DialogType = "alert" | "confirm" | "prompt" | "beforeunload";

/** What to do when a dialog opens: answer it at once, or leave it to the agent. */
export type DialogAnswer = "accept" | "dismiss" | "ask";

/** How each kind of dialog is answered: the dialog policy. */
export type DialogPolicy = Partial<Record<DialogType, DialogAnswer>>;

/** A JavaScript dialog, open or answered by the policy. */
export interface DialogInfo {
  /** The kind of dialog. */
  type: DialogType;
  /** Its message. */
  message: string;
  /** The default answer of a prompt. */
  defaultPrompt?: string;
  /** How the policy answered it; absent while it waits for the agent. */
  answered?: "accepted" | "dismissed";
}

const DEFAULT_DIALOGS: Record<DialogType, DialogAnswer> = {
  alert: "accept",
  beforeunload: "accept",
  confirm: "ask",
  prompt: "ask",
};

/** A promise of the next dialog that waits for the agent, and a way to stop waiting. */
export interface NextDialog {
  /** Resolves when a dialog opens that waits for the agent. */
  promise: Promise<{ done: false }>;
  /** Stops waiting. */
  cancel(): void;
}

/** The dialogs of one actor: the policy, the dialog held open, those the policy answered. */
export class Dialogs {
  #policy: Record<DialogType, DialogAnswer>;
  #timeoutMs: number;
  #open: { page: Page; info: DialogInfo } | undefined;
  #waiters = new Set<() => void>();
  #answered: DialogInfo[] = [];
  #inflight: Promise<void> | undefined;

  /**
   * @param policy how each kind of dialog is answered, over the defaults
   * @param timeoutMs the timeout of the command that answers a dialog
   */
  constructor(policy: Partial<Record<DialogType, DialogAnswer>> | undefined, timeoutMs: number) {
    this.#policy = { ...DEFAULT_DIALOGS, ...policy };
    this.#timeoutMs = timeoutMs;
  }

  /** The dialog waiting for the agent's answer, if any. */
  get open(): DialogInfo | undefined {
    return this.#open?.info;
  }

  /** The dialogs the policy answered during the current action. */
  get answered(): DialogInfo[] {
    return this.#answered;
  }

  /** Starts a new action's list of answered dialogs (results keep the old list). */
  begin(): void {
    this.#answered = [];
  }

  /** Waits for the next dialog that waits for the agent. */
  next(): NextDialog {
    let wake: () => void = () => {};
    const promise = new Promise<{ done: false }>((resolve) => {
      wake = () => resolve({ done: false });
      this.#waiters.add(wake);
    });
    return { promise, cancel: () => this.#waiters.delete(wake) };
  }

  /** Keeps the action a held dialog interrupted, so that answering it waits for the action. */
  interrupted(action: Promise<unknown>): void {
    this.#inflight = action.then(() => {}, (error) => logFailure("action behind a dialog", error));
  }

  /** Answers a dialog that opened on `page` by the policy, or holds it for the agent. */
  opening(page: Page, event: EventParams<"Page.javascriptDialogOpening">): void {
    const type = event.type as DialogType;
    const info: DialogInfo = {
      type,
      message: event.message,
      ...(type === "prompt" ? { defaultPrompt: event.defaultPrompt ?? "" } : {}),
    };
    const answer = this.#policy[type] ?? "dismiss";
    if (answer === "ask") {
      this.#open = { page, info };
      for (const wake of [...this.#waiters]) wake();
      this.#waiters.clear();
      return;
    }
    info.answered = answer === "accept" ? "accepted" : "dismissed";
    this.#answered.push(info);
    bestEffort(
      "answering a dialog",
      page.session.send("Page.handleJavaScriptDialog", { accept: answer === "accept" }),
    );
  }

  /** Forgets the held dialog when its tab closed. */
  closed(page: Page): void {
    if (this.#open?.page === page) this.#open = undefined;
  }

  /**
   * Answers the held dialog for the agent, then lets the action it
   * interrupted go on, waiting for it or the next dialog.
   *
   * @throws {ActionError} `no-dialog` when none is open
   */
  async answer(accept: boolean, text: string | undefined): Promise<void> {
    const dialog = this.#open;
    if (!dialog) throw new ActionError("no-dialog", "Cannot answer a dialog: none is open");
    await dialog.page.session.send("Page.handleJavaScriptDialog", {
      accept,
      ...(text !== undefined ? { promptText: text } : {}),
    }, { timeoutMs: this.#timeoutMs });
    this.#open = undefined;
    const inflight = this.#inflight;
    this.#inflight = undefined;
    if (inflight) {
      // The action the dialog interrupted goes on; wait for it, or the next dialog.
      const next = this.next();
      try {
        await Promise.race([inflight, next.promise]);
      } finally {
        next.cancel();
      }
    }
  }
}
