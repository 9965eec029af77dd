/**
 * What settling holds for one CDP session (a page or an out-of-process
 * iframe): the listeners feeding its page's {@linkcode PageActivity}, and the
 * render barriers of `engine/page/settle.ts`, run in an isolated world.
 *
 * @module
 */
import { logFailure } from "../log.ts";
import type { CdpSession } from "../cdp/connection.ts";
import { listen } from "./_listeners.ts";
import type { PageActivity } from "./_page_activity.ts";
import { SETTLE_ANIMATIONS, SETTLE_BARRIER } from "../observe/_page_bundle.ts";

/** The world name of the barrier. */
const WORLD = "__webserv_settle";

/** One session's part in settling. */
export class SessionTracker {
  /** The session watched. */
  readonly session: CdpSession;
  /** The record of the page the session belongs to. */
  readonly activity: PageActivity;
  #off: () => void;
  #world: Promise<number> | undefined;
  #worldId: number | undefined;
  #onDestroyed = ({ executionContextId }: { executionContextId: number }) => {
    if (executionContextId === this.#worldId) this.#forgetWorld();
  };
  #onCleared = () => this.#forgetWorld();

  /**
   * @param session the session to watch
   * @param activity the record of its page
   * @param options the hook's binding and the navigation grace period
   */
  constructor(
    session: CdpSession,
    activity: PageActivity,
    options: { binding: string; graceMs: number },
  ) {
    this.session = session;
    this.activity = activity;
    this.#off = listen(session, activity, options);
    session.on("Runtime.executionContextDestroyed", this.#onDestroyed);
    session.on("Runtime.executionContextsCleared", this.#onCleared);
  }

  /**
   * Waits until the session's renderer has drawn two frames.
   *
   * @param timeoutMs how long to wait at most
   * @returns whether the barrier passed; `false` when it failed or timed out
   */
  async barrier(timeoutMs: number): Promise<boolean> {
    if (this.session.closeReason !== undefined) return true;
    try {
      const contextId = await this.#isolatedWorld();
      const { exceptionDetails } = await this.session.send("Runtime.callFunctionOn", {
        functionDeclaration: SETTLE_BARRIER,
        executionContextId: contextId,
        awaitPromise: true,
        returnByValue: true,
      }, { timeoutMs: Math.max(1, timeoutMs) });
      return exceptionDetails === undefined;
    } catch (error) {
      this.#forgetWorld();
      logFailure("settle barrier", error);
      return false;
    }
  }

  /**
   * Waits for the running finite animations of the session's document to
   * end (`engine/page/settle.ts`), then for two frames.
   *
   * @param budgetMs how long to wait for animations at most
   * @param timeoutMs how long the call may take at most
   * @returns how many animations it waited for; `0` when it failed or timed out
   */
  async animations(budgetMs: number, timeoutMs: number): Promise<number> {
    if (this.session.closeReason !== undefined) return 0;
    try {
      const contextId = await this.#isolatedWorld();
      const { result, exceptionDetails } = await this.session.send("Runtime.callFunctionOn", {
        functionDeclaration: SETTLE_ANIMATIONS,
        arguments: [{ value: Math.max(0, Math.floor(budgetMs)) }],
        executionContextId: contextId,
        awaitPromise: true,
        returnByValue: true,
      }, { timeoutMs: Math.max(1, timeoutMs) });
      return exceptionDetails === undefined ? Number(result.value) || 0 : 0;
    } catch (error) {
      this.#forgetWorld();
      logFailure("settle animations", error);
      return 0;
    }
  }

  /** Stops listening. */
  dispose(): void {
    this.#off();
    this.session.off("Runtime.executionContextDestroyed", this.#onDestroyed);
    this.session.off("Runtime.executionContextsCleared", this.#onCleared);
  }

  #isolatedWorld(): Promise<number> {
    this.#world ??= (async () => {
      // A page or iframe target's id is the id of its main frame.
      const frameId = this.session.targetInfo?.targetId;
      if (frameId === undefined) throw new TypeError("Cannot settle: the session has no target");
      const { executionContextId } = await this.session.send("Page.createIsolatedWorld", {
        frameId,
        worldName: WORLD,
      });
      this.#worldId = executionContextId;
      return executionContextId;
    })();
    return this.#world;
  }

  #forgetWorld(): void {
    this.#world = undefined;
    this.#worldId = undefined;
  }
}
