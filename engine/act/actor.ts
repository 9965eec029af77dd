/**
 * Executes agent actions on the pages of one browser context with real input
 * events, then waits for the page to settle.
 *
 * This file keeps the tabs and the settle; the rest lives beside it:
 * `_dialogs.ts` answers or holds the dialogs, `_translate.ts` maps browser
 * errors to action errors, `_calls.ts` finds elements and runs the in-page
 * functions on them, `_pointer.ts` aims and presses, `_keyboard.ts` sends
 * keys and text, and `_type_into.ts`, `_choose.ts` (`select`, `check`),
 * `_drag.ts`, `_scroll.ts`, `_upload.ts` and `_navigate.ts` (`goto`,
 * `back`, `forward`) do those actions.
 *
 * Invariants:
 * - input is validated by `parseAction` before anything touches the page;
 * - pointer actions (`_pointer.ts`) scroll the target into view (within
 *   every scrolling ancestor and the viewport) only when its clipping boxes
 *   do not show all of it, then aim at a point of the shown part where the
 *   hit test lands on the target, a descendant (shadow roots pierced) or its
 *   label; after the pointer moves there the hit test runs again before the
 *   press, and a target a hover effect moved is aimed at again, one it hid
 *   or covered is an error (nothing is pressed); `scroll` with an id scrolls
 *   that element or its nearest scrolling ancestor itself; coordinates are
 *   mapped from the element's frame to the page through same-process frames
 *   (by the document's CDP box) and out-of-process frames (by each owner's
 *   box);
 * - `type` (`_type_into.ts`) fills a field as `_typing.ts` describes (keys,
 *   inserted runs, or the value setter for dates and ranges), follows the
 *   focus when the field or a stand-in for it is replaced as it takes focus,
 *   and succeeds only when the field reads back holding the text; a field
 *   the focus is already inside is typed into where its caret is, with no
 *   click first (an editor's pending formats live at the caret);
 * - `drag` presses, moves in paced steps and releases; an HTML5 drag the
 *   move starts goes on as drag events (`Input.setInterceptDrags`); it
 *   succeeds only when the page shows a change;
 * - every failure of the agent's is an {@linkcode ActionError} with a code
 *   (`invalid-action` for input that is not an action); anything else that
 *   escapes is our bug, which the env reports as `EnvError("internal")`; the
 *   actor keeps no half-done state, so the next action works;
 * - a JavaScript dialog is answered by the policy at once, or, when the
 *   policy says `ask`, ends the action early with the dialog in the result;
 *   until the agent answers it with `dialog`, other actions fail with
 *   `dialog-open`;
 * - a tab the action opened (a popup or `target=_blank`) becomes the active
 *   tab.
 *
 * @module
 */
import { observed } from "../log.ts";
import { currentSignal } from "../cdp/abort_scope.ts";
import type { BrowserContext } from "../browser/browser_context.ts";
import type { Page } from "../browser/page.ts";
import type { SettleOptions, Settler, SettleResult } from "../settle/settler.ts";
import { type Action, parseAction } from "./action.ts";
import type { ElementResolver } from "./element_resolver.ts";
import { ActionError } from "./errors.ts";
import { parseChord } from "./_keys.ts";
import { ElementCalls } from "./_calls.ts";
import { Pointer, type PressOutcome } from "./_pointer.ts";
import { Keyboard } from "./_keyboard.ts";
import { typeInto, type TypeTools } from "./_type_into.ts";
import { type ChooseTools, selectOption, setChecked } from "./_choose.ts";
import { uploadFiles, type UploadTools } from "./_upload.ts";
import { scroll, type ScrollTools } from "./_scroll.ts";
import { drag, type DragTools } from "./_drag.ts";
import { type DialogInfo, type DialogPolicy, Dialogs } from "./_dialogs.ts";
import { goto, history } from "./_navigate.ts";
import { translate } from "./_translate.ts";

export type { DialogAnswer, DialogInfo, DialogPolicy, DialogType } from "./_dialogs.ts";

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
  dialogs?: DialogPolicy;
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
   * For `upload` to something other than a file input: how the files were
   * given (the file chooser a click opened, or dropped on it); for `drag`: how it dragged (pointer moves, or HTML5 drag and drop) and
   * what it changed; for `select`: the option chosen; for `check`/`uncheck`: whether anything
   * changed; for `scroll` of a container: where it scrolled to, or that it
   * was at its end.
   */
  detail?: string;
  /**
   * For `click` and `dblclick`: the receipt of the press (see
   * `PressOutcome`): `whole` (press, release and click on the target),
   * `handled` (the press on the target, whose default a page listener
   * prevented or while handling which the page changed the DOM), `gone`
   * (the press on the target, then its document went away: a navigation).
   * A press without a receipt is aimed again once, then an error, never a
   * result.
   */
  press?: PressOutcome;
}

/** What the actions in their own modules act with: one object serves them all. */
type ActTools = TypeTools & ChooseTools & UploadTools & ScrollTools & DragTools;

/**
 * Executes actions on the tabs of one context.
 *
 * @example Click an element by id, then read how the page settled
 * ```ts ignore
 * import { Actor, Browser, newContext, Observer, Settler } from "@webserv/webserv/engine";
 * await using browser = await Browser.launch();
 * const context = await newContext(browser);
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
  #tools: ActTools;
  #settler: Settler | undefined;
  #settleOptions: SettleOptions;
  #timeoutMs: number;
  #allowUrl: (url: URL) => boolean;
  #tabs: Page[] = [];
  #active = 0;
  #dialogs: Dialogs;
  #opened: Page[] = [];
  #windowOpens = 0;
  #press: PressOutcome | undefined;
  #pageWaiters = new Set<() => void>();
  #stopped: string | undefined;

  /**
   * Creates an actor over the tabs of a context.
   *
   * @param context the context whose pages are the tabs; pages opened later join
   * @param options the resolver, settler, dialog policy and limits
   * @throws {RangeError} when `timeoutMs` is not positive
   */
  constructor(context: BrowserContext, options: ActorOptions) {
    this.#settler = options.settler;
    this.#settleOptions = options.settle ?? {};
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    if (!(this.#timeoutMs > 0)) {
      throw new RangeError(
        `Cannot create actor: "timeoutMs" must be positive, got ${this.#timeoutMs}`,
      );
    }
    this.#dialogs = new Dialogs(options.dialogs, this.#timeoutMs);
    this.#allowUrl = options.allowUrl ??
      ((url) => url.protocol === "http:" || url.protocol === "https:");
    const calls = new ElementCalls(options.resolver, this.#timeoutMs);
    this.#tools = {
      calls,
      pointer: new Pointer(
        calls,
        this.#timeoutMs,
        (session) => this.#tabs.find((tab) => tab.session === session) ?? this.#activePage(),
        (capMs) => this.#settleWithin(capMs),
      ),
      keyboard: new Keyboard(() => this.#activePage().session, this.#timeoutMs),
      settle: (capMs) => this.#settleWithin(capMs),
      timeoutMs: this.#timeoutMs,
      uploadDir: options.uploadDir,
      shareFiles: (paths) => context.shareFiles(paths),
    };
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
    return this.#dialogs.open;
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
   * @throws {ActionError} when the input is not a valid action (`invalid-action`) or the
   *   action cannot be done; `code` says why
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
    const open = this.#dialogs.open;
    if (open && action.action !== "dialog") {
      const { type, message } = open;
      throw new ActionError(
        "dialog-open",
        `Cannot ${action.action}: a ${type} dialog is open ("${message}"); answer it with "dialog" first`,
      );
    }
    this.#dialogs.begin();
    this.#press = undefined;
    this.#opened = [];
    this.#windowOpens = 0;
    const since = performance.now();
    const asked = this.#dialogs.next();
    let detail: string | undefined;
    try {
      const run = this.#run(action).then((value) => ({ done: true as const, value }));
      const outcome = await Promise.race([run, asked.promise]);
      if (!outcome.done) {
        this.#dialogs.interrupted(run);
        return this.#state(action);
      }
      detail = outcome.value;
    } catch (error) {
      throw translate(error, action);
    } finally {
      asked.cancel();
    }
    const result: ActResult = this.#state(action);
    if (detail !== undefined) result.detail = detail;
    if (this.#press !== undefined) result.press = this.#press;
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
    const dialog = this.#dialogs.open;
    if (dialog) result.dialog = dialog;
    result.answeredDialogs = this.#dialogs.answered;
    return result;
  }

  /** Settles the active tab, unless a dialog waits; stops when one opens. */
  async #settle(since: number): Promise<SettleResult | undefined> {
    const page = this.page;
    if (!this.#settler || !page || page.closed || this.#dialogs.open) return undefined;
    const dialog = this.#dialogs.next();
    const abort = new AbortController();
    // It never rejects; marked so that nothing could leave it unhandled.
    observed(dialog.promise.then(() => abort.abort()));
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

  /** Settles the active tab for at most `capMs`; false when there is no settler or tab. */
  async #settleWithin(capMs: number): Promise<boolean> {
    if (!this.#settler || !this.page) return false;
    await this.#settler.settle(this.page, { ...this.#settleOptions, capMs });
    return true;
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
    const dialog = this.#dialogs.open;
    return {
      action,
      tab: this.#active,
      tabs: this.#tabs.length,
      answeredDialogs: this.#dialogs.answered,
      ...(dialog ? { dialog } : {}),
    };
  }

  #track(page: Page): void {
    if (this.#tabs.includes(page)) return;
    this.#tabs.push(page);
    page.session.on("Page.javascriptDialogOpening", (event) => this.#dialogs.opening(page, event));
    page.session.on("Page.windowOpen", () => this.#windowOpens++);
    page.on("close", () => {
      const index = this.#tabs.indexOf(page);
      if (index === -1) return;
      this.#tabs.splice(index, 1);
      if (index < this.#active || this.#active >= this.#tabs.length) {
        this.#active = Math.max(0, this.#active - 1);
      }
      this.#dialogs.closed(page);
    });
  }

  async #run(action: Action): Promise<string | undefined> {
    const { calls, pointer, keyboard } = this.#tools;
    switch (action.action) {
      case "click": {
        const point = await pointer.aim(await calls.element(action.id), action.id);
        this.#press = await pointer.mouse(
          point,
          "click",
          action.button ?? "left",
          action.modifiers ?? [],
        );
        return;
      }
      case "dblclick": {
        const point = await pointer.aim(await calls.element(action.id), action.id);
        this.#press = await pointer.mouse(point, "dblclick", "left", []);
        return;
      }
      case "hover": {
        const ref = await calls.element(action.id);
        const point = await pointer.aim(ref, action.id, { allowDisabled: true });
        await pointer.mouse(point, "hover", "left", []);
        return;
      }
      case "drag":
        return await drag(this.#tools, action);
      case "type":
        return await typeInto(
          this.#tools,
          action.id,
          action.text,
          action.mode ?? "replace",
          action.enter ?? false,
        );
      case "press": {
        const chord = parseChord(action.keys);
        if (action.id !== undefined) {
          const ref = await calls.element(action.id);
          await calls.ready(ref, action.id);
          await calls.call(ref, "FOCUS");
        }
        await keyboard.chord(chord.modifiers, chord.key);
        return;
      }
      case "select":
        return await selectOption(this.#tools, action.id, action.option, action.by ?? "label");
      case "check":
      case "uncheck":
        return await setChecked(this.#tools, action.id, action.action === "check");
      case "scroll":
        return await scroll(this.#tools, this.#activePage(), action);
      case "goto":
        await goto(this.#activePage(), action.url, {
          allowUrl: this.#allowUrl,
          timeoutMs: this.#timeoutMs,
        });
        return;
      case "back":
      case "forward":
        await history(this.#activePage(), action.action === "back" ? -1 : 1, this.#timeoutMs);
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
        return await uploadFiles(this.#tools, action.id, action.files);
      case "dialog":
        await this.#dialogs.answer(action.accept, action.text);
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
}
