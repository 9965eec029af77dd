/**
 * Executes agent actions on the pages of one browser context with real input
 * events, then waits for the page to settle.
 *
 * Invariants:
 * - input is validated by `parseAction` before anything touches the page;
 * - pointer actions scroll the target into view (within every scrolling
 *   ancestor and the viewport) only when its clipping boxes do not show all
 *   of it, then aim at a point of the shown part where the hit test lands on
 *   the target, a descendant (shadow roots pierced) or its label; after the
 *   pointer moves there the hit test runs again before the press, and a
 *   target a hover effect moved is aimed at again, one it hid or covered is
 *   an error (nothing is pressed); `scroll` with an id scrolls that element
 *   or its nearest scrolling ancestor itself; coordinates are mapped
 *   from the element's frame to the page through same-process frames (by the
 *   document's CDP box) and out-of-process frames (by each owner's box);
 * - `type` fills a field as `_typing.ts` describes (keys, inserted runs, or
 *   the value setter for dates and ranges), follows the focus when the field
 *   or a stand-in for it is replaced as it takes focus, and succeeds only
 *   when the field reads back holding the text;
 * - every failure is an {@linkcode ActionError} with a code (or a `TypeError`
 *   for invalid input); the actor keeps no half-done state, so the next
 *   action works;
 * - a JavaScript dialog is answered by the policy at once, or, when the
 *   policy says `ask`, ends the action early with the dialog in the result;
 *   until the agent answers it with `dialog`, other actions fail with
 *   `dialog-open`;
 * - a tab the action opened (a popup or `target=_blank`) becomes the active
 *   tab.
 *
 * @module
 */
import { realpath, stat } from "node:fs/promises";
import { isAbsolute, resolve as resolvePath, sep } from "node:path";
import { bestEffort, logFailure } from "../log.ts";
import { currentSignal } from "../cdp/abort_scope.ts";
import type { BrowserContext } from "../browser/browser_context.ts";
import type { Page } from "../browser/page.ts";
import type { CdpSession } from "../cdp/connection.ts";
import { CdpTimeoutError, ProtocolError, TargetClosedError } from "../cdp/errors.ts";
import type { EventParams } from "../cdp/protocol.ts";
import type { SettleOptions, Settler, SettleResult } from "../settle/settler.ts";
import { type Action, type Modifier, parseAction } from "./action.ts";
import type { ElementLocation, ElementRef, ElementResolver } from "./element_resolver.ts";
import { ActionError } from "./errors.ts";
import {
  CARET_TO_END,
  CHECK_POINT,
  type CheckResult,
  DOCUMENT_ELEMENT,
  type ElementFacts,
  FACTS,
  FACTS_POINT,
  FILE_INPUT,
  FIND_OPTION,
  FOCUS,
  HAS_TEXT,
  OWNER_COVER,
  POINT,
  type PointResult,
  SCROLL_BY,
  SCROLL_INTO_VIEW,
  type ScrollByResult,
  SELECT_NATIVE,
  type SelectResult,
  VIEWPORT,
} from "./_in_page.ts";
import { ELEMENT_GONE, fullSource, LIBRARY_MISSING, libraryStub } from "./_library.ts";
import { type KeyDefinition, keyDefinition, modifierMask, parseChord } from "./_keys.ts";
import {
  consumed,
  expectedValue,
  FIELD_STATE,
  type FieldState,
  type FieldWatch,
  FOCUSED_EDITABLE,
  formatOf,
  holds,
  isSettable,
  quoteHeld,
  READ_WATCH,
  SET_VALUE,
  TYPE_MAX_LENGTH,
  typingPlan,
  WATCH_FIELD,
} from "./_typing.ts";

/** The kinds of JavaScript dialog. */
export type DialogType = "alert" | "confirm" | "prompt" | "beforeunload";

/** What to do when a dialog opens: answer it at once, or leave it to the agent. */
export type DialogAnswer = "accept" | "dismiss" | "ask";

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

/** Options of an {@linkcode Actor}. */
export interface ActorOptions {
  /** Turns element ids into CDP handles (the observer, usually). */
  resolver: ElementResolver;
  /** Settles pages after each action; without it actions return at once. */
  settler?: Settler;
  /** Options of every settle. */
  settle?: SettleOptions;
  /**
   * How each kind of dialog is answered.
   *
   * @default {{ alert: "accept", beforeunload: "accept", confirm: "ask", prompt: "ask" }}
   */
  dialogs?: Partial<Record<DialogType, DialogAnswer>>;
  /**
   * Timeout of every browser command, in milliseconds.
   *
   * @default {10000}
   */
  timeoutMs?: number;
  /**
   * Which URLs `goto` may open.
   *
   * @default {http: and https: URLs}
   */
  allowUrl?: (url: URL) => boolean;
  /**
   * The only directory `upload` takes files from. Paths in the action are
   * relative to it; absolute paths, `..` that leaves it and symlinks that
   * point out of it are refused (`ActionError("not-allowed")`). Without it,
   * every upload is refused, so an agent cannot send the host's files.
   *
   * @default {none: uploads are refused}
   */
  uploadDir?: string;
}

/** What an action did. */
export interface ActResult {
  /** The validated action. */
  action: Action;
  /** The index of the active tab afterwards. */
  tab: number;
  /** How many tabs are open. */
  tabs: number;
  /** How the page settled; absent when nothing was waited for. */
  settle?: SettleResult;
  /** A dialog waiting for the agent's answer. */
  dialog?: DialogInfo;
  /** Dialogs the policy answered during the action. */
  answeredDialogs: DialogInfo[];
  /** The index of a tab the action opened; it is now the active tab. */
  opened?: number;
  /** For `stop`: the agent's answer. */
  answer?: string;
  /**
   * For `select`: the option chosen; for `check`/`uncheck`: whether anything
   * changed; for `scroll` of a container: where it scrolled to, or that it
   * was at its end.
   */
  detail?: string;
}

/** Elements that may stand in for a field until clicked (then `type` follows the focus). */
const STAND_IN_TAGS = /^(div|span|p|li|section|article|td)$/;

/** The error of an id whose element left the page. */
function stale(id: number, cause?: unknown): ActionError {
  return new ActionError("stale-id", `Element ${id} is gone from the page`, {
    id,
    ...(cause !== undefined ? { cause } : {}),
  });
}

/**
 * An element by its id in the observer's world, with no handle fetched: the
 * first in-page call finds it there (see `ElementResolver.locate`).
 */
interface IdRef extends ElementLocation {
  /** The id the agent gave, for errors. */
  id: number;
}

/** An element as an action holds it: a CDP handle, or an id in its world. */
type Ref = ElementRef | IdRef;

/** A point aimed at on an element: in the page, and in the element's own frame. */
interface Aim {
  page: Page;
  x: number;
  y: number;
  ref: Ref;
  id: number;
  local: { x: number; y: number };
}

const DEFAULT_DIALOGS: Record<DialogType, DialogAnswer> = {
  alert: "accept",
  beforeunload: "accept",
  confirm: "ask",
  prompt: "ask",
};

/** Browser messages that mean a handle's node or context is gone. */
const GONE =
  /Could not find node|No node with given id|Node is detached|Cannot find context|Cannot find object|Execution context was destroyed|Inspected target navigated/i;

/**
 * Executes actions on the tabs of one context.
 *
 * @example Click an element by id, then read how the page settled
 * ```ts ignore
 * import { Actor, Browser, Observer, Settler } from "@webserv/webserv";
 * await using browser = await Browser.launch();
 * const context = await browser.newContext();
 * const settler = Settler.install(context);
 * const observer = Observer.attach(context);
 * const page = await context.newPage("http://127.0.0.1:8000/");
 * const actor = new Actor(context, { resolver: observer, settler });
 * await observer.observe(page);
 * const result = await actor.act({ action: "click", id: 3 });
 * console.log(result.settle?.ms);
 * ```
 */
export class Actor {
  #resolver: ElementResolver;
  #settler: Settler | undefined;
  #settleOptions: SettleOptions;
  #policy: Record<DialogType, DialogAnswer>;
  #timeoutMs: number;
  #allowUrl: (url: URL) => boolean;
  #tabs: Page[] = [];
  #active = 0;
  #dialog: { page: Page; info: DialogInfo } | undefined;
  #dialogWaiters = new Set<() => void>();
  #answered: DialogInfo[] = [];
  #opened: Page[] = [];
  #windowOpens = 0;
  #pageWaiters = new Set<() => void>();
  #inflight: Promise<void> | undefined;
  #stopped: string | undefined;
  #uploadDir: string | undefined;

  /**
   * Creates an actor over the tabs of a context.
   *
   * @param context the context whose pages are the tabs; pages opened later join
   * @param options the resolver, settler, dialog policy and limits
   * @throws {RangeError} when `timeoutMs` is not positive
   */
  constructor(context: BrowserContext, options: ActorOptions) {
    this.#resolver = options.resolver;
    this.#settler = options.settler;
    this.#settleOptions = options.settle ?? {};
    this.#policy = { ...DEFAULT_DIALOGS, ...options.dialogs };
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    if (!(this.#timeoutMs > 0)) {
      throw new RangeError(
        `Cannot create actor: "timeoutMs" must be positive, got ${this.#timeoutMs}`,
      );
    }
    this.#allowUrl = options.allowUrl ??
      ((url) => url.protocol === "http:" || url.protocol === "https:");
    this.#uploadDir = options.uploadDir;
    for (const page of context.pages) this.#track(page);
    context.on("page", (page) => {
      this.#track(page);
      this.#opened.push(page);
      for (const wake of [...this.#pageWaiters]) wake();
    });
  }

  /** The open tabs, in the order they opened. */
  get tabs(): readonly Page[] {
    return this.#tabs;
  }

  /** The index of the active tab. */
  get tab(): number {
    return this.#active;
  }

  /** The active tab, or `undefined` when none is open. */
  get page(): Page | undefined {
    return this.#tabs[this.#active];
  }

  /** The dialog waiting for the agent's answer, if any. */
  get dialog(): DialogInfo | undefined {
    return this.#dialog?.info;
  }

  /** The agent's answer once it took `stop`. */
  get answer(): string | undefined {
    return this.#stopped;
  }

  /**
   * Validates and executes one action, then waits for the page to settle.
   *
   * @param input the action, as parsed JSON from the agent
   * @returns what the action did and how the page settled
   * @throws {TypeError} when the input is not a valid action
   * @throws {ActionError} when the action cannot be done; `code` says why
   */
  async act(input: unknown): Promise<ActResult> {
    const action = parseAction(input);
    if (this.#stopped !== undefined) {
      throw new ActionError("not-allowed", 'Cannot act: the episode ended with "stop"');
    }
    if (action.action === "stop") {
      this.#stopped = action.answer;
      return { ...this.#state(action), answer: action.answer };
    }
    if (this.#dialog && action.action !== "dialog") {
      const { type, message } = this.#dialog.info;
      throw new ActionError(
        "dialog-open",
        `Cannot ${action.action}: a ${type} dialog is open ("${message}"); answer it with "dialog" first`,
      );
    }
    this.#answered = [];
    this.#opened = [];
    this.#windowOpens = 0;
    const since = performance.now();
    const asked = this.#nextDialog();
    let detail: string | undefined;
    try {
      const run = this.#run(action).then((value) => ({ done: true as const, value }));
      const outcome = await Promise.race([run, asked.promise]);
      if (!outcome.done) {
        this.#inflight = run.then(() => {}, (error) => logFailure("action behind a dialog", error));
        return this.#state(action);
      }
      detail = outcome.value;
    } catch (error) {
      throw this.#translate(error, action);
    } finally {
      asked.cancel();
    }
    const result: ActResult = this.#state(action);
    if (detail !== undefined) result.detail = detail;
    const settled = await this.#settle(since);
    if (settled) result.settle = settled;
    // A link or script that opens a window: wait for the tab, switch, settle it.
    if (this.#windowOpens > 0 || this.#opened.length > 0) {
      const opened = await this.#openedPage();
      if (opened) {
        this.#active = this.#tabs.indexOf(opened);
        result.opened = this.#active;
        result.tab = this.#active;
        result.tabs = this.#tabs.length;
        const again = await this.#settle(since);
        if (again) result.settle = again;
      }
    }
    if (this.#dialog) result.dialog = this.#dialog.info;
    result.answeredDialogs = this.#answered;
    return result;
  }

  /** Settles the active tab, unless a dialog waits; stops when one opens. */
  async #settle(since: number): Promise<SettleResult | undefined> {
    const page = this.page;
    if (!this.#settler || !page || page.closed || this.#dialog) return undefined;
    const dialog = this.#nextDialog();
    const abort = new AbortController();
    dialog.promise.then(() => abort.abort(), () => {});
    // An abandoned operation (its abort scope aborted) stops waiting too.
    const scope = currentSignal();
    try {
      return await this.#settler.settle(page, {
        ...this.#settleOptions,
        since,
        signal: scope ? AbortSignal.any([abort.signal, scope]) : abort.signal,
      });
    } finally {
      dialog.cancel();
    }
  }

  /** The newest open tab this action opened, waiting for it if it is not attached yet. */
  async #openedPage(): Promise<Page | undefined> {
    const newest = () => this.#opened.findLast((page) => !page.closed);
    if (newest() || this.#windowOpens === 0) return newest();
    let wake: () => void = () => {};
    const arrived = new Promise<void>((resolve) => {
      wake = resolve;
      this.#pageWaiters.add(wake);
    });
    const timer = setTimeout(wake, this.#timeoutMs);
    const scope = currentSignal();
    scope?.addEventListener("abort", wake, { once: true });
    try {
      await arrived;
    } finally {
      clearTimeout(timer);
      scope?.removeEventListener("abort", wake);
      this.#pageWaiters.delete(wake);
    }
    return newest();
  }

  #state(action: Action): ActResult {
    return {
      action,
      tab: this.#active,
      tabs: this.#tabs.length,
      answeredDialogs: this.#answered,
      ...(this.#dialog ? { dialog: this.#dialog.info } : {}),
    };
  }

  #translate(error: unknown, action: Action): unknown {
    if (error instanceof ActionError || error instanceof TypeError) return error;
    const id = "id" in action && action.id !== undefined ? action.id : undefined;
    if (error instanceof CdpTimeoutError) {
      return new ActionError(
        "timeout",
        `Cannot ${action.action}: the browser did not answer "${error.method}" within ${error.timeoutMs} ms`,
        { cause: error, ...(id !== undefined ? { id } : {}) },
      );
    }
    if (
      error instanceof ProtocolError &&
      (error instanceof TargetClosedError || GONE.test(error.message))
    ) {
      if (id !== undefined) return stale(id, error);
      return new ActionError("navigation-failed", `Cannot ${action.action}: the page went away`, {
        cause: error,
      });
    }
    return error;
  }

  /** A promise of the next dialog that waits for the agent, and a way to stop waiting. */
  #nextDialog(): { promise: Promise<{ done: false }>; cancel(): void } {
    let wake: () => void = () => {};
    const promise = new Promise<{ done: false }>((resolve) => {
      wake = () => resolve({ done: false });
      this.#dialogWaiters.add(wake);
    });
    return { promise, cancel: () => this.#dialogWaiters.delete(wake) };
  }

  #track(page: Page): void {
    if (this.#tabs.includes(page)) return;
    this.#tabs.push(page);
    page.session.on("Page.javascriptDialogOpening", (event) => this.#onDialog(page, event));
    page.session.on("Page.windowOpen", () => this.#windowOpens++);
    page.on("close", () => {
      const index = this.#tabs.indexOf(page);
      if (index === -1) return;
      this.#tabs.splice(index, 1);
      if (index < this.#active || this.#active >= this.#tabs.length) {
        this.#active = Math.max(0, this.#active - 1);
      }
      if (this.#dialog?.page === page) this.#dialog = undefined;
    });
  }

  #onDialog(page: Page, event: EventParams<"Page.javascriptDialogOpening">): void {
    const type = event.type as DialogType;
    const info: DialogInfo = {
      type,
      message: event.message,
      ...(type === "prompt" ? { defaultPrompt: event.defaultPrompt ?? "" } : {}),
    };
    const answer = this.#policy[type] ?? "dismiss";
    if (answer === "ask") {
      this.#dialog = { page, info };
      for (const wake of [...this.#dialogWaiters]) wake();
      this.#dialogWaiters.clear();
      return;
    }
    info.answered = answer === "accept" ? "accepted" : "dismissed";
    this.#answered.push(info);
    bestEffort(
      "answering a dialog",
      page.session.send("Page.handleJavaScriptDialog", { accept: answer === "accept" }),
    );
  }

  async #run(action: Action): Promise<string | undefined> {
    switch (action.action) {
      case "click": {
        const point = await this.#aim(await this.#element(action.id), action.id);
        await this.#mouse(point, "click", action.button ?? "left", action.modifiers ?? []);
        return;
      }
      case "dblclick": {
        const point = await this.#aim(await this.#element(action.id), action.id);
        await this.#mouse(point, "dblclick", "left", []);
        return;
      }
      case "hover": {
        const ref = await this.#element(action.id);
        const point = await this.#aim(ref, action.id, { allowDisabled: true });
        await this.#mouse(point, "hover", "left", []);
        return;
      }
      case "type":
        return await this.#type(
          action.id,
          action.text,
          action.mode ?? "replace",
          action.enter ?? false,
        );
      case "press": {
        const chord = parseChord(action.keys);
        if (action.id !== undefined) {
          const ref = await this.#element(action.id);
          await this.#ready(ref, action.id);
          await this.#call(ref, FOCUS);
        }
        await this.#chord(chord.modifiers, chord.key);
        return;
      }
      case "select":
        return await this.#select(action.id, action.option, action.by ?? "label");
      case "check":
      case "uncheck":
        return await this.#check(action.id, action.action === "check");
      case "scroll":
        return await this.#scroll(action);
      case "goto":
        await this.#goto(action.url);
        return;
      case "back":
      case "forward":
        await this.#history(action.action === "back" ? -1 : 1);
        return;
      case "reload":
        await this.#activePage().session.send("Page.reload", {}, { timeoutMs: this.#timeoutMs });
        return;
      case "switch_tab": {
        const page = this.#tabAt(action.tab);
        await page.session.send("Page.bringToFront", undefined, { timeoutMs: this.#timeoutMs });
        this.#active = action.tab;
        return;
      }
      case "close_tab": {
        const index = action.tab ?? this.#active;
        const page = this.#tabAt(index);
        if (this.#tabs.length === 1) {
          throw new ActionError("not-allowed", "Cannot close the last tab");
        }
        await page.close();
        return;
      }
      case "upload":
        await this.#upload(action.id, action.files);
        return;
      case "dialog":
        await this.#answer(action.accept, action.text);
        return;
      case "stop":
        return;
    }
  }

  #activePage(): Page {
    const page = this.page;
    if (!page) throw new ActionError("not-allowed", "Cannot act: no tab is open");
    return page;
  }

  #tabAt(index: number): Page {
    const page = this.#tabs[index];
    if (!page) {
      throw new ActionError(
        "not-allowed",
        `No tab ${index}: ${this.#tabs.length} tabs are open (0 to ${this.#tabs.length - 1})`,
      );
    }
    return page;
  }

  async #element(id: number): Promise<Ref> {
    const where = this.#resolver.locate?.(id);
    if (where) return { ...where, id };
    const ref = await this.#resolver.resolve(id);
    if (ref) return ref;
    if (this.#resolver.known && !this.#resolver.known(id)) {
      throw new ActionError("unknown-id", `No element has id ${id}`, { id });
    }
    throw stale(id);
  }

  /**
   * Runs an in-page function on an element: by name from the library in the
   * element's world when it is there (see `_library.ts`), else from source.
   * An element held by id is found by the world itself.
   */
  async #invoke(ref: Ref, fn: string, args: unknown[], returnByValue: boolean) {
    const byId = "local" in ref;
    const send = (functionDeclaration: string) =>
      ref.session.send("Runtime.callFunctionOn", {
        ...(byId ? { executionContextId: ref.executionContextId } : { objectId: ref.objectId }),
        functionDeclaration,
        arguments: (byId ? [ref.local, ...args] : args).map((value) => ({ value })),
        returnByValue,
      }, { timeoutMs: this.#timeoutMs });
    // A world gone with its document fails the call: `#translate` makes that stale-id.
    const stub = libraryStub(fn, byId);
    let answer = stub === undefined ? undefined : await send(stub);
    if (answer === undefined || answer.result.value === LIBRARY_MISSING) {
      answer = await send(fullSource(fn, byId));
    }
    if (byId && answer.result.value === ELEMENT_GONE) throw stale(ref.id);
    return answer;
  }

  /** Calls an in-page function on an element and returns its JSON value. */
  async #call<T>(ref: Ref, fn: string, args: unknown[] = []): Promise<T> {
    const { result, exceptionDetails } = await this.#invoke(ref, fn, args, true);
    if (exceptionDetails) {
      throw new Error(
        `In-page call failed: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`,
      );
    }
    // Our own in-page functions produce these values; this is the one cast.
    return result.value as T;
  }

  /** Calls an in-page function that returns an element, as a new handle. */
  async #callForElement(
    ref: Ref,
    fn: string,
    args: unknown[] = [],
  ): Promise<ElementRef | undefined> {
    const { result } = await this.#invoke(ref, fn, args, false);
    if (result.subtype !== "node" || !result.objectId) return undefined;
    return { session: ref.session, objectId: result.objectId };
  }

  /** Checks the element can be acted on; returns its facts. */
  async #ready(
    ref: Ref,
    id: number,
    options: { allowDisabled?: boolean } = {},
  ): Promise<ElementFacts> {
    return this.#readyFacts(await this.#call<ElementFacts>(ref, FACTS), id, options);
  }

  /** The facts of an element an action needs, or the action's error. */
  #readyFacts(
    facts: ElementFacts,
    id: number,
    options: { allowDisabled?: boolean } = {},
  ): ElementFacts {
    if (facts.state === "stale") {
      throw stale(id);
    }
    if (facts.state === "hidden") {
      throw new ActionError("not-visible", `Element ${id} (${facts.name}) is not visible`, { id });
    }
    if (facts.state === "disabled" && !options.allowDisabled) {
      throw new ActionError("disabled", `Element ${id} (${facts.name}) is disabled`, { id });
    }
    return facts;
  }

  /** {@linkcode Actor.#ready} and {@linkcode Actor.#point} in one round trip. */
  async #aim(ref: Ref, id: number, options: { allowDisabled?: boolean } = {}): Promise<Aim> {
    const answer = await this.#call<{ facts: ElementFacts; point?: PointResult }>(
      ref,
      FACTS_POINT,
      [options.allowDisabled ?? false],
    );
    this.#readyFacts(answer.facts, id, options);
    if (!answer.point) throw new Error("In-page call failed: a ready element gave no point");
    return await this.#pointFrom(ref, id, answer.point);
  }

  /** A hit-tested point on the element, in the page's coordinates. */
  async #point(ref: Ref, id: number): Promise<Aim> {
    return await this.#pointFrom(ref, id, await this.#call<PointResult>(ref, POINT));
  }

  /** Where to press on the page, from the point the element's frame found. */
  async #pointFrom(ref: Ref, id: number, found: PointResult): Promise<Aim> {
    if (!found.ok) {
      if (found.reason === "covered") {
        const cover = found.cover ?? "another element";
        throw new ActionError("covered", `Element ${id} is covered by ${cover}`, {
          id,
          ...(found.cover ? { cover: found.cover } : {}),
        });
      }
      throw new ActionError("not-visible", `Element ${id} has no visible area in the viewport`, {
        id,
      });
    }
    const local = { x: found.x, y: found.y };
    let x = found.x;
    let y = found.y;
    // The frame's offset in its local root: the document element's CDP box
    // (local-root coordinates) minus its box in the frame's own viewport. The
    // page's top frame has none: three round trips saved on most actions.
    const topFrame = found.top && ref.session.parentSessionId === undefined;
    const documentElement = topFrame
      ? undefined
      : await this.#callForElement(ref, DOCUMENT_ELEMENT);
    if (documentElement) {
      try {
        const { quads } = await ref.session.send("DOM.getContentQuads", {
          objectId: documentElement.objectId,
        }, { timeoutMs: this.#timeoutMs });
        const quad = quads[0];
        if (quad && quad.length >= 2) {
          x += quad[0]! - found.docX;
          y += quad[1]! - found.docY;
        }
      } finally {
        bestEffort(
          "releasing a handle",
          ref.session.send("Runtime.releaseObject", { objectId: documentElement.objectId }),
        );
      }
    }
    // Out-of-process frames: add each owner iframe's content box in its parent.
    let session: CdpSession = ref.session;
    while (session.parentSessionId !== undefined) {
      const parent = session.connection.session(session.parentSessionId);
      const frameId = session.targetInfo?.targetId;
      if (!parent || frameId === undefined) break;
      const { backendNodeId } = await parent.send("DOM.getFrameOwner", { frameId }, {
        timeoutMs: this.#timeoutMs,
      });
      const owner = await parent.send("DOM.resolveNode", { backendNodeId }, {
        timeoutMs: this.#timeoutMs,
      });
      if (owner.object.objectId) {
        const ownerRef = { session: parent, objectId: owner.object.objectId };
        try {
          const cover = await this.#call<string | null>(ownerRef, OWNER_COVER, [x, y]);
          if (cover !== null) {
            throw new ActionError("covered", `Element ${id} is covered by ${cover}`, { id, cover });
          }
        } finally {
          bestEffort(
            "releasing a handle",
            parent.send("Runtime.releaseObject", { objectId: owner.object.objectId }),
          );
        }
      }
      const { model } = await parent.send("DOM.getBoxModel", { backendNodeId }, {
        timeoutMs: this.#timeoutMs,
      });
      x += model.content[0] ?? 0;
      y += model.content[1] ?? 0;
      session = parent;
    }
    const page = this.#tabs.find((tab) => tab.session === session) ?? this.#activePage();
    return { page, x, y, ref, id, local };
  }

  /**
   * After the pointer moved to `aim`: the hit test must still land on the
   * target, or the press would land on whatever a hover effect put there.
   * When the target moved, aim again (a few times); when it is gone or
   * covered now, a typed error.
   */
  async #reaim(aim: Aim, mask: number): Promise<Aim> {
    for (let tries = 0;; tries++) {
      const check = await this.#call<CheckResult>(aim.ref, CHECK_POINT, [aim.local.x, aim.local.y]);
      if (check.ok) return aim;
      if (check.gone) {
        throw new ActionError(
          "stale-id",
          `Element ${aim.id} is gone from the page: it went away when the pointer moved onto it`,
          { id: aim.id },
        );
      }
      if (tries >= 2) {
        throw new ActionError(
          "target-moved",
          `Element ${aim.id} kept moving when the pointer moved onto it: nothing was pressed`,
          { id: aim.id },
        );
      }
      aim = await this.#point(aim.ref, aim.id);
      await aim.page.session.send(
        "Input.dispatchMouseEvent",
        { type: "mouseMoved", x: aim.x, y: aim.y, modifiers: mask },
        { timeoutMs: this.#timeoutMs },
      );
    }
  }

  async #mouse(
    point: Aim,
    kind: "click" | "dblclick" | "hover",
    button: "left" | "right" | "middle",
    modifiers: Modifier[],
  ): Promise<void> {
    const options = { timeoutMs: this.#timeoutMs };
    const mask = modifierMask(modifiers);
    await point.page.session.send(
      "Input.dispatchMouseEvent",
      { type: "mouseMoved", x: point.x, y: point.y, modifiers: mask },
      options,
    );
    if (kind === "hover") return;
    const { page, x, y } = await this.#reaim(point, mask);
    const session = page.session;
    const buttons = button === "left" ? 1 : button === "right" ? 2 : 4;
    for (let clickCount = 1; clickCount <= (kind === "dblclick" ? 2 : 1); clickCount++) {
      const base = { x, y, button, clickCount, modifiers: mask };
      const release = () =>
        session.send(
          "Input.dispatchMouseEvent",
          { type: "mouseReleased", buttons: 0, ...base },
          options,
        );
      try {
        await session.send(
          "Input.dispatchMouseEvent",
          { type: "mousePressed", buttons, ...base },
          options,
        );
      } catch (error) {
        // Never leave the button held down: the next action would drag.
        bestEffort("releasing the mouse button", release());
        throw error;
      }
      await release();
    }
  }

  async #key(definition: KeyDefinition, mask: number, down: boolean): Promise<void> {
    const session = this.#activePage().session;
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

  async #chord(modifiers: Modifier[], key: KeyDefinition): Promise<void> {
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

  async #type(
    id: number,
    text: string,
    mode: "replace" | "append",
    enter: boolean,
  ): Promise<string | undefined> {
    if (text.length > TYPE_MAX_LENGTH) {
      throw new ActionError(
        "too-long",
        `Cannot type ${text.length} characters into element ${id}: the most one "type" takes is ${TYPE_MAX_LENGTH}`,
        { id },
      );
    }
    const ref = await this.#element(id);
    const facts = await this.#ready(ref, id);
    // A plain element standing in for a field ("Add a comment…") becomes one
    // when clicked: type into whatever field the click focused.
    const standIn = !facts.editable && !facts.readonly && STAND_IN_TAGS.test(facts.tag) &&
      /^(|textbox|searchbox)$/.test(facts.role);
    if (!facts.editable && !standIn) {
      const why = facts.readonly ? "is read-only" : "does not take text";
      throw new ActionError("not-editable", `Element ${id} (${facts.name}) ${why}`, { id });
    }
    const notSet = (message: string) => new ActionError("value-not-set", message, { id });
    // Focus the way a person does, with a click; focus() only if that did not.
    await this.#mouse(await this.#point(ref, id), "click", "left", []);
    let target = ref;
    let field = await this.#call<FieldState>(ref, FIELD_STATE);
    if (standIn) {
      const focused = await this.#callForElement(ref, FOCUSED_EDITABLE);
      if (!focused) {
        throw new ActionError(
          "not-editable",
          `Element ${id} (${facts.name}) does not take text, and clicking it focused no field`,
          { id },
        );
      }
      target = focused;
      field = await this.#call<FieldState>(target, FIELD_STATE);
    } else if (field.connected && field.disabled) {
      throw notSet(`Element ${id} (${facts.name}) became disabled when it took focus`);
    }
    if (target === ref && (!field.connected || !await this.#call<boolean>(ref, FOCUS))) {
      // Replaced (or hidden behind a new field) as it took focus: keys go to
      // whatever editable has focus now, as they would for a person.
      const focused = await this.#callForElement(ref, FOCUSED_EDITABLE);
      if (!focused) {
        if (!field.connected) {
          throw notSet(
            `Element ${id} (${facts.name}) was replaced when it took focus, and no field has focus: observe again`,
          );
        }
        throw new ActionError("not-editable", `Element ${id} (${facts.name}) cannot take focus`, {
          id,
        });
      }
      target = focused;
      field = await this.#call<FieldState>(target, FIELD_STATE);
    }
    let detail: string | undefined;
    let watcher: string | undefined;
    try {
      const settable = isSettable(field.type);
      const expected = settable
        ? text
        : expectedValue(field.value ?? field.text ?? "", text, mode, field.tag);
      if (settable) {
        await this.#call(target, SET_VALUE, [expected]);
      } else {
        if (mode === "replace") {
          if (await this.#call<boolean>(target, HAS_TEXT)) {
            await this.#chord(["Control"], keyDefinition("a")!);
            await this.#chord([], keyDefinition("Backspace")!);
          }
        } else {
          await this.#call(target, CARET_TO_END);
        }
        watcher = await this.#watch(target);
        await this.#typeText(text);
      }
      let after = await this.#call<FieldState>(target, FIELD_STATE);
      // A tag or chip input that turned the text into tags and cleared itself.
      const seen = watcher !== undefined ? await this.#unwatch(target, watcher) : undefined;
      watcher = undefined;
      const tags = seen && !holds(after, expected) && after.connected && !after.disabled
        ? consumed(expected, after.value ?? after.text ?? "", seen)
        : null;
      if (tags) {
        detail = tags.length > 0
          ? `the field turned the text into ${tags.map((tag) => `"${tag}"`).join(", ")} and holds ${
            quoteHeld(after)
          }`
          : `the field took the text, fired change and holds ${quoteHeld(after)}`;
      } else if (!holds(after, expected)) {
        if (!after.connected) {
          throw notSet(`Element ${id} (${facts.name}) was removed from the page while typing`);
        }
        if (after.disabled) {
          throw notSet(`Element ${id} (${facts.name}) became disabled while typing`);
        }
        if (after.maxLength >= 0 && expected.length > after.maxLength) {
          throw notSet(
            `Element ${id} (${facts.name}) takes at most ${after.maxLength} characters and holds ${
              quoteHeld(after)
            }`,
          );
        }
        // Keys did not take (a field that filters or rebuilds its value):
        // set it the way a framework listens for, once.
        if (after.value !== null && !settable) {
          await this.#call(target, SET_VALUE, [expected]);
          after = await this.#call<FieldState>(target, FIELD_STATE);
        }
        if (!holds(after, expected)) {
          const format = formatOf(after.type);
          const asked = text.length > 40 ? `${text.slice(0, 39)}…` : text;
          throw notSet(
            `Element ${id} (${facts.name}) holds ${quoteHeld(after)} after typing "${asked}"${
              format ? `: a ${after.type} field takes ${format}` : ""
            }`,
          );
        }
      }
    } finally {
      if (watcher !== undefined) {
        bestEffort("stopping a field watch", this.#unwatch(target, watcher));
      }
      if (target !== ref && "objectId" in target) {
        const { objectId } = target;
        bestEffort(
          "releasing a handle",
          target.session.send("Runtime.releaseObject", { objectId }),
        );
      }
    }
    if (enter) await this.#chord([], keyDefinition("Enter")!);
    return detail;
  }

  /** Starts watching a field being typed into; returns the watcher's handle. */
  async #watch(target: Ref): Promise<string | undefined> {
    const { result } = await this.#invoke(target, WATCH_FIELD, [], false);
    return result.objectId;
  }

  /** Stops a field watch; returns what it saw, or nothing when the page went away. */
  async #unwatch(target: Ref, watcher: string): Promise<FieldWatch | undefined> {
    try {
      return await this.#call<FieldWatch>(
        { session: target.session, objectId: watcher },
        READ_WATCH,
      );
    } catch (error) {
      if (error instanceof ActionError) throw error;
      return undefined;
    } finally {
      bestEffort(
        "releasing a handle",
        target.session.send("Runtime.releaseObject", { objectId: watcher }),
      );
    }
  }

  /** Types text into the focused field: key by key when short, inserted in runs when long. */
  async #typeText(text: string): Promise<void> {
    const session = this.#activePage().session;
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

  async #select(id: number, option: string, by: "label" | "value"): Promise<string> {
    const ref = await this.#element(id);
    const facts = await this.#ready(ref, id);
    const native = await this.#call<SelectResult>(ref, SELECT_NATIVE, [option, by]);
    if (native.kind === "done") return native.chosen;
    if (native.kind === "not-found") throw this.#optionNotFound(id, option, by, native.options);
    // ARIA: open a combobox with a click, then click the option.
    if (facts.role === "combobox" || facts.role === "button") {
      await this.#mouse(await this.#point(ref, id), "click", "left", []);
      if (this.#settler && this.page) {
        await this.#settler.settle(this.page, { ...this.#settleOptions, capMs: 2_000 });
      }
    }
    const found = await this.#callForElement(ref, FIND_OPTION, [option, by]);
    if (!found) {
      const labels = await this.#call<string[] | null>(ref, FIND_OPTION, [option, by]);
      throw this.#optionNotFound(id, option, by, Array.isArray(labels) ? labels : []);
    }
    try {
      await this.#mouse(await this.#point(found, id), "click", "left", []);
    } finally {
      bestEffort(
        "releasing a handle",
        found.session.send("Runtime.releaseObject", { objectId: found.objectId }),
      );
    }
    return option;
  }

  #optionNotFound(id: number, option: string, by: string, options: string[]): ActionError {
    const list = options.length > 0 ? `; options: ${options.map((o) => `"${o}"`).join(", ")}` : "";
    return new ActionError(
      "option-not-found",
      `Element ${id} has no option with ${by} "${option}"${list}`,
      { id },
    );
  }

  async #check(id: number, checked: boolean): Promise<string> {
    const ref = await this.#element(id);
    const facts = await this.#ready(ref, id);
    if (facts.checked === null) {
      throw new ActionError(
        "not-editable",
        `Element ${id} (${facts.name}) is not a checkbox, radio button or switch`,
        { id },
      );
    }
    if (facts.checked === checked) return "unchanged";
    const radio = facts.type === "radio" || facts.role === "radio" ||
      facts.role === "menuitemradio";
    if (!checked && radio) {
      throw new ActionError(
        "not-editable",
        `Element ${id} (${facts.name}) is a radio button: check another option instead`,
        { id },
      );
    }
    await this.#mouse(await this.#point(ref, id), "click", "left", []);
    // Read the state back: a click on a stand-in the page does not wire to
    // its input, or a handler that undoes the change, leaves it as it was.
    let after: ElementFacts;
    try {
      after = await this.#call<ElementFacts>(ref, FACTS);
      if (after.state !== "stale" && after.checked !== checked && this.#settler && this.page) {
        await this.#settler.settle(this.page, { ...this.#settleOptions, capMs: 2_000 });
        after = await this.#call<ElementFacts>(ref, FACTS);
      }
    } catch (error) {
      // The click navigated (a form that submits on change): its document is gone.
      if (error instanceof ActionError || error instanceof CdpTimeoutError) throw error;
      return "changed; the page moved on, so not read back";
    }
    // Re-rendered away by the click (a ticked item moving to another list):
    // nothing is left to read.
    if (after.state === "stale") return "changed; the element was replaced, so not read back";
    // A role without aria-checked keeps its state where nothing can read it.
    if (!facts.checkedShown && !after.checkedShown) return "clicked; its state is not shown";
    if (after.checked !== checked) {
      throw new ActionError(
        "value-not-set",
        `Element ${id} (${facts.name}) is still ${
          checked ? "unchecked" : "checked"
        } after a click on it: the page did not take the click`,
        { id },
      );
    }
    return "changed";
  }

  async #scroll(action: Extract<Action, { action: "scroll" }>): Promise<string | undefined> {
    const page = this.#activePage();
    if (action.id !== undefined && action.direction === undefined) {
      const ref = await this.#element(action.id);
      await this.#ready(ref, action.id, { allowDisabled: true });
      await this.#call(ref, SCROLL_INTO_VIEW);
      return;
    }
    let point: { page: Page; x: number; y: number };
    let viewport: { width: number; height: number };
    if (action.id !== undefined) {
      const ref = await this.#element(action.id);
      await this.#ready(ref, action.id, { allowDisabled: true });
      // A container scrolls itself (or its nearest scrolling ancestor): a
      // wheel at its centre would scroll whatever nested box lies there.
      const direction = action.direction ?? "down";
      const vertical = direction === "up" || direction === "down";
      const sign = direction === "up" || direction === "left" ? -1 : 1;
      const done = await this.#call<ScrollByResult>(ref, SCROLL_BY, [
        vertical,
        sign,
        action.amount ?? 0,
      ]);
      if (done.kind === "scrolled") return `${done.container} scrolled to ${done.x},${done.y}`;
      if (done.kind === "at-end") return `${done.container} is already at its ${direction} end`;
      viewport = await this.#call(ref, VIEWPORT);
      point = await this.#point(ref, action.id);
    } else {
      const { result } = await page.session.send("Runtime.evaluate", {
        expression:
          "({ width: document.documentElement.clientWidth || innerWidth, height: document.documentElement.clientHeight || innerHeight })",
        returnByValue: true,
      }, { timeoutMs: this.#timeoutMs });
      viewport = result.value as { width: number; height: number };
      point = { page, x: viewport.width / 2, y: viewport.height / 2 };
    }
    const direction = action.direction ?? "down";
    const vertical = direction === "up" || direction === "down";
    const amount = action.amount ?? Math.round((vertical ? viewport.height : viewport.width) * 0.8);
    const sign = direction === "up" || direction === "left" ? -1 : 1;
    await point.page.session.send("Input.dispatchMouseEvent", {
      type: "mouseWheel",
      x: point.x,
      y: point.y,
      deltaX: vertical ? 0 : sign * amount,
      deltaY: vertical ? sign * amount : 0,
    }, { timeoutMs: this.#timeoutMs });
  }

  async #goto(url: string): Promise<void> {
    const page = this.#activePage();
    let target: URL;
    try {
      const { frameTree } = await page.session.send("Page.getFrameTree", undefined, {
        timeoutMs: this.#timeoutMs,
      });
      target = new URL(url, frameTree.frame.url);
    } catch (error) {
      if (error instanceof ProtocolError || error instanceof CdpTimeoutError) throw error;
      throw new TypeError(`Invalid "goto" action: "${url}" is not a URL`);
    }
    if (!this.#allowUrl(target)) {
      throw new ActionError("not-allowed", `Cannot open "${target.href}": the URL is not allowed`);
    }
    const { errorText } = await page.session.send("Page.navigate", { url: target.href }, {
      timeoutMs: this.#timeoutMs,
    });
    if (errorText) {
      throw new ActionError("navigation-failed", `Cannot open "${target.href}": ${errorText}`);
    }
  }

  async #history(delta: -1 | 1): Promise<void> {
    const page = this.#activePage();
    const options = { timeoutMs: this.#timeoutMs };
    const { currentIndex, entries } = await page.session.send(
      "Page.getNavigationHistory",
      undefined,
      options,
    );
    const entry = entries[currentIndex + delta];
    if (!entry) {
      throw new ActionError(
        "navigation-failed",
        `Cannot go ${delta < 0 ? "back" : "forward"}: there is no ${
          delta < 0 ? "previous" : "next"
        } page in history`,
      );
    }
    await page.session.send("Page.navigateToHistoryEntry", { entryId: entry.id }, options);
  }

  async #upload(id: number, files: string[]): Promise<void> {
    const ref = await this.#element(id);
    // File inputs are often hidden behind a styled label: no visibility check.
    const facts = await this.#call<ElementFacts>(ref, FACTS);
    if (facts.state === "stale") {
      throw stale(id);
    }
    const input = await this.#callForElement(ref, FILE_INPUT);
    if (!input) {
      throw new ActionError("not-editable", `Element ${id} is not a file input`, { id });
    }
    const paths = await this.#uploadPaths(files);
    try {
      await input.session.send(
        "DOM.setFileInputFiles",
        { files: paths, objectId: input.objectId },
        {
          timeoutMs: this.#timeoutMs,
        },
      );
    } finally {
      bestEffort(
        "releasing a handle",
        input.session.send("Runtime.releaseObject", { objectId: input.objectId }),
      );
    }
  }

  /**
   * The real paths of `files` inside the upload directory. Each is resolved
   * against the directory, symlinks followed, and must still lie inside it.
   */
  async #uploadPaths(files: string[]): Promise<string[]> {
    if (this.#uploadDir === undefined) {
      throw new ActionError("not-allowed", "Cannot upload: the env has no upload directory");
    }
    const root = await realpath(this.#uploadDir);
    const inside = (path: string) => path.startsWith(root.endsWith(sep) ? root : root + sep);
    const paths: string[] = [];
    for (const file of files) {
      const candidate = resolvePath(root, file);
      if (isAbsolute(file) || !inside(candidate)) {
        throw new ActionError(
          "not-allowed",
          `Cannot upload "${file}": it is outside the upload directory`,
        );
      }
      let real: string;
      try {
        real = await realpath(candidate);
        if (!(await stat(real)).isFile()) throw new Error("not a file");
      } catch {
        throw new TypeError(`Invalid "upload" action: "${file}" is not a readable file`);
      }
      if (!inside(real)) {
        throw new ActionError(
          "not-allowed",
          `Cannot upload "${file}": it links outside the upload directory`,
        );
      }
      paths.push(real);
    }
    return paths;
  }

  async #answer(accept: boolean, text: string | undefined): Promise<void> {
    const dialog = this.#dialog;
    if (!dialog) throw new ActionError("no-dialog", "Cannot answer a dialog: none is open");
    await dialog.page.session.send("Page.handleJavaScriptDialog", {
      accept,
      ...(text !== undefined ? { promptText: text } : {}),
    }, { timeoutMs: this.#timeoutMs });
    this.#dialog = undefined;
    const inflight = this.#inflight;
    this.#inflight = undefined;
    if (inflight) {
      // The action the dialog interrupted goes on; wait for it, or the next dialog.
      const next = this.#nextDialog();
      try {
        await Promise.race([inflight, next.promise]);
      } finally {
        next.cancel();
      }
    }
  }
}
