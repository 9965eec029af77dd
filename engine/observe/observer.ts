/**
 * The observation engine, driver side: installs the page scripts in every
 * page and out-of-process iframe of a context, runs the distiller in every
 * frame, stitches the frames into one text and one list of element facts.
 *
 * How it fits together:
 *
 * - At attach time every target (page, popup, out-of-process iframe) gets two
 *   document-start scripts: the main-world hook (`engine/page/hook.ts`, which
 *   remembers elements given click or hover listeners by script) and the
 *   distiller (`engine/page/isolated.ts`) in the isolated world
 *   {@linkcode WORLD_NAME}. Runtime events map each frame to that world's
 *   execution context.
 * - An observation runs the distiller in every frame at once (out-of-process
 *   frames in parallel in their renderers). A page's top frame hands out ids
 *   from the observer's counter; every other frame hands out ids from a
 *   counter of its own, mapped here to ids of the context in frame order the
 *   first time they are shown, so ids are unique across frames and tabs of
 *   the context and never reused, and a frame's element keeps its id.
 * - Ids resolve back to elements with {@linkcode Observer.resolve}, which
 *   asks the frame's isolated world for the element; the actions engine uses
 *   that (it implements `ElementResolver`).
 *
 * @module
 */
import type { BrowserContext } from "../browser/browser_context.ts";
import type { Page } from "../browser/page.ts";
import type { CdpSession } from "../cdp/connection.ts";
import { ProtocolError } from "../cdp/errors.ts";
import type { CommandResult } from "../cdp/protocol.ts";
import type { DistillRequest, DistillResult, WireElement, WireNode } from "./wire.ts";
import type { Box, TreeNode } from "./tree.ts";
import { bestEffort } from "../log.ts";
import { describeElement, formatNodes, FRAME_MARK } from "./format_observation.ts";
import { HOOK_SCRIPT, ISOLATED_SCRIPT, PAGE_BUNDLE_VERSION } from "./_page_bundle.ts";
// The actor calls its in-page functions on handles from this world; installed
// with the world, they cost nothing per call (see `_library.ts`).
import { ACT_LIBRARY } from "../act/_library.ts";
import type { ElementLocation } from "../act/element_resolver.ts";
import { decodePng, encodePng } from "./_png.ts";
import { drawMarks, type Mark } from "./set_of_marks.ts";

/** The name of the isolated world the distiller runs in. */
export const WORLD_NAME = "__webserv_observer";

/** What to observe. */
export interface ObserveOptions {
  /**
   * `"page"`: the whole page; `"viewport"`: only what lies in the viewport
   * plus `margin`, with counts of what lies outside; `"diff"`: the whole page
   * distilled, but the text lists only the elements added (`+`), changed
   * (`~`) or removed (`-`) since the previous observation of the page, and
   * the lines of text that are new (`+`).
   *
   * @default {"page"}
   */
  mode?: "page" | "viewport" | "diff";
  /**
   * CSS pixels around the viewport that count as inside, in `"viewport"` mode.
   *
   * @default {300}
   */
  margin?: number;
  /**
   * Summarise runs of similar siblings longer than this (`0` never does).
   *
   * @default {20}
   */
  summariseAfter?: number;
  /**
   * How many items of a summarised run are listed besides those in view.
   *
   * @default {5}
   */
  keepItems?: number;
  /**
   * Longest name or value kept, in characters.
   *
   * @default {100}
   */
  maxText?: number;
  /**
   * Whether to return the distilled tree in {@linkcode Observation.tree}
   * (the text and the element facts are always returned).
   *
   * @default {false}
   */
  tree?: boolean;
}

/** One element with an id, as structured facts. */
export interface ObservedElement {
  /** The id, unique in the context for the episode. */
  id: number;
  /** The ARIA role, or `"clickable"` for a generic element with signals. */
  role: string;
  /** The accessible name. */
  name: string;
  /** The value, if the element has one (passwords masked). */
  value?: string;
  /** States such as `checked`, `expanded`, `focused`. */
  states: string[];
  /** Interactivity cues such as `hover`, `listener`, `pointer`, `editable`. */
  cues: string[];
  /** The border box in CSS pixels, relative to the top-level viewport. */
  box: Box;
  /** The CDP frame id of the element's document. */
  frame: string;
  /**
   * Whether the box intersects the viewport and the visible part of every
   * scroll container around it (an item scrolled out of its list is not).
   */
  inViewport: boolean;
  /** Whether the id is new since the previous observation. */
  isNew: boolean;
  /** Where a link goes: path on the page's own origin, host and path elsewhere. */
  href?: string;
  /** A `title` that differs from the name (a tooltip), for roles named from their content. */
  description?: string;
  /**
   * The id of the nearest enclosing element with an id that holds others
   * (a scroll container, or a dialog, form, list or menu with an id), so a
   * program can scope a search or scroll the right box.
   */
  container?: number;
}

/** Scroll offsets and sizes of a document, in CSS pixels. */
export interface ScrollState {
  /** Horizontal scroll offset. */
  x: number;
  /** Vertical scroll offset. */
  y: number;
  /** Scrollable width of the document. */
  width: number;
  /** Scrollable height of the document. */
  height: number;
  /** Viewport width. */
  vw: number;
  /** Viewport height. */
  vh: number;
}

/** What changed since the previous observation of a page. */
export interface ObservationDiff {
  /** Ids listed now and not before. */
  added: number[];
  /** Ids listed before and not now. */
  removed: number[];
  /** Ids listed both times whose line changed. */
  changed: number[];
}

/** One observation of a page. */
export interface Observation {
  /** The compact text for the agent. */
  text: string;
  /**
   * The distilled tree, frames stitched in (iframes become `role: "iframe"`
   * elements), when asked for; boxes in it are relative to their own frame.
   */
  tree?: TreeNode[];
  /** Every element with an id, in document order. */
  elements: ObservedElement[];
  /** Changes since the previous observation of the page. */
  diff: ObservationDiff;
  /** The top-level document's URL. */
  url: string;
  /** The top-level document's title. */
  title: string;
  /** The top-level document's scroll state. */
  scroll: ScrollState;
  /**
   * Milliseconds: the whole observation, the part spent distilling in pages,
   * and the top frame's distiller passes.
   */
  timing: { totalMs: number; pageMs: number; passes: Record<string, number> };
}

/** Where an element with an id lives, as CDP handles the actions engine can use. */
export interface ElementHandle {
  /** The id. */
  id: number;
  /** The session of the target (page or out-of-process iframe) holding the element. */
  session: CdpSession;
  /** The CDP frame id of the element's document. */
  frameId: string;
  /** The isolated world's execution context in that frame. */
  executionContextId: number;
  /** A remote object of the element in the isolated world, in object group {@linkcode OBJECT_GROUP}. */
  objectId: string;
}

/** A set-of-marks screenshot. */
export interface SetOfMarks {
  /** The PNG file's bytes. */
  png: Uint8Array;
  /** The marks drawn: each element id and its box in CSS pixels of the viewport. */
  marks: { id: number; box: Box }[];
  /** Image width in device pixels. */
  width: number;
  /** Image height in device pixels. */
  height: number;
}

/** Most lines of new text a diff lists. */
const MAX_DIFF_TEXT = 40;

/** The object group remote objects from this module belong to. */
export const OBJECT_GROUP = "webserv-observer";

interface SessionState {
  session: CdpSession;
  /** Frames attached in the target, counted from `Page.frameAttached` and `Page.frameDetached`. */
  frameCount: number;
  /** frame id → our isolated world's execution context id. */
  worlds: Map<string, number>;
  /**
   * child frame id → the iframe element hosting it, as a remote object in
   * our isolated world (kept across observations: two round trips a frame
   * saved each time; dropped when the frame detaches or the world goes).
   */
  owners: Map<string, { contextId: number; objectId: string }>;
  /** The frames of the target, `[frame id, parent id]`, until a frame attaches, detaches or navigates. */
  tree?: [string, string | undefined][] | undefined;
  /** Frame attachments and detachments seen, so a tree read meanwhile is not kept. */
  treeChanges: number;
  ready: Promise<void>;
}

interface FrameIds {
  /** The next id the frame's distiller hands out. */
  next: number;
  /** The frame's ids → ids of the context. */
  global: Map<number, number>;
}

interface FrameInfo {
  frameId: string;
  parentId: string | undefined;
  state: SessionState;
}

// One JSON string crosses faster than the same value as a protocol object tree.
const OBSERVE_FUNCTION =
  "function(req, ...owners) { return JSON.stringify(globalThis.__webserv.observe(req, ...owners)); }";
const ELEMENT_FUNCTION = "function(id) { return globalThis.__webserv.element(id); }";

function randomSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `x${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

function isContextGone(error: unknown): boolean {
  return error instanceof ProtocolError && !(error.name === "TargetClosedError") &&
    /context|frame|node|object/i.test(error.message);
}

/**
 * Observes the pages of one browser context: one observer per episode, so
 * ids are unique across its pages and frames and never reused.
 *
 * @example Observe a page, then find the element behind an id
 * ```ts ignore
 * import { Browser, Observer } from "@webserv/webserv";
 * await using browser = await Browser.launch();
 * const context = await browser.newContext();
 * const observer = Observer.attach(context); // before the pages open
 * const page = await context.newPage("data:text/html,<button>Go</button>");
 * const { text, elements } = await observer.observe(page);
 * console.log(text); // # (untitled) … \n[1] button "Go"
 * const handle = await observer.resolve(elements[0]!.id);
 * // handle.session + handle.objectId: call DOM.scrollIntoViewIfNeeded, DOM.getContentQuads, …
 * const changes = await observer.observe(page, { mode: "diff" });
 * const marks = await observer.setOfMarks(page); // marks.png: Uint8Array
 * ```
 */
export class Observer {
  #secret = randomSecret();
  #nextId = 1;
  #sessions = new WeakMap<CdpSession, SessionState>();
  /** id → frame id, session and the frame's own id, for the ids handed out so far. */
  #where = new Map<number, { frameId: string; state: SessionState; local: number }>();
  /** Per frame other than a top one: its own id counter, and its ids → the context's ids. */
  #frameIdMaps = new Map<string, FrameIds>();
  #previous = new WeakMap<
    Page,
    { url: string; lines: Map<number, string>; texts: Set<string> }
  >();
  #hookSource: string;
  #isolatedSource: string;

  private constructor() {
    this.#hookSource = `(() => { ${HOOK_SCRIPT}; __webservHook.installHook(${
      JSON.stringify(this.#secret)
    }); })();`;
    this.#isolatedSource = `(() => { ${ISOLATED_SCRIPT}; __webservIsolated.installIsolated(${
      JSON.stringify(this.#secret)
    }, ${JSON.stringify(PAGE_BUNDLE_VERSION)}); })();\n${ACT_LIBRARY}`;
  }

  /**
   * Makes an observer for a context and installs its page scripts in every
   * page and out-of-process iframe the context attaches from now on. Pages
   * opened before are prepared on their first observation, without the
   * main-world hook for documents already loaded.
   *
   * @param context the browser context of the episode
   * @returns the observer
   */
  static attach(context: BrowserContext): Observer {
    const observer = new Observer();
    context.addInitializer(({ session }) => observer.#prepare(session));
    return observer;
  }

  /**
   * Observes a page: every frame, out-of-process iframes included.
   *
   * @param page the page
   * @param options the mode and size limits
   * @returns the observation
   * @throws {TargetClosedError} when the page closes meanwhile
   * @throws {ProtocolError} when the top-level document cannot be observed
   */
  async observe(page: Page, options: ObserveOptions = {}): Promise<Observation> {
    const started = performance.now();
    const mode = options.mode ?? "page";
    const req: DistillRequest = {
      nextId: this.#nextId,
      mode: mode === "viewport" ? "viewport" : "page",
      margin: options.margin ?? 300,
      summariseAfter: options.summariseAfter ?? 20,
      keepItems: options.keepItems ?? 5,
      maxText: options.maxText ?? 100,
      tree: options.tree ?? false,
    };
    let pageMs = 0;
    const sessions = [page.session, ...page.frameSessions];
    const states = await Promise.all(
      sessions.map((s) => this.#prepare(s).then(() => this.#state(s))),
    );
    // A page with one frame and no out-of-process children needs no frame
    // tree: its one world belongs to the main frame, whose id is the target's.
    const only = states.length === 1 ? states[0]! : undefined;
    const frames = only && only.worlds.size === 1 && only.worlds.has(page.targetId) &&
        only.frameCount === 1
      ? [{ frameId: page.targetId, parentId: undefined, state: only }]
      : await this.#frames(states);
    const main = frames.find((f) => f.state.session === page.session && f.parentId === undefined);
    if (!main) throw new ProtocolError(`Cannot observe "${page.targetId}": it has no main frame`);
    const children = (frameId: string) => frames.filter((f) => f.parentId === frameId);

    const elements: ObservedElement[] = [];
    // Every frame is distilled at once (out-of-process frames in their own
    // renderers, in parallel). The top frame hands out ids from the
    // observer's counter; any other frame hands out ids of its own (a counter
    // per frame), which become ids of the context here, in frame order, the
    // first time the frame shows them; see `#frameIds`.
    const reachable: FrameInfo[] = [];
    const reach = (frame: FrameInfo, depth: number) => {
      reachable.push(frame);
      if (depth < 8) { for (const kid of children(frame.frameId)) reach(kid, depth + 1); }
    };
    reach(main, 0);
    const distilled = new Map<FrameInfo, DistillResult | undefined>();
    await Promise.all(reachable.map(async (frame) => {
      const isTop = frame === main;
      const ids = isTop ? undefined : this.#frameIds(frame.frameId);
      const frameReq: DistillRequest = isTop ? req : { ...req, nextId: ids!.next, tree: true };
      const result = await this.#distill(frame, children(frame.frameId), frameReq, isTop);
      if (result && ids) ids.next = Math.max(ids.next, result.nextId);
      distilled.set(frame, result);
    }));
    const top = distilled.get(main);
    if (top) this.#nextId = top.nextId;
    const observeFrame = (
      frame: FrameInfo,
      depth: number,
      dx: number,
      dy: number,
    ): { lines: string[]; nodes: WireNode[] } | undefined => {
      const kids = children(frame.frameId);
      const result = distilled.get(frame);
      if (!result) return undefined;
      pageMs += result.ms;
      if (depth > 0) this.#relabel(frame, result);
      for (const facts of result.elements) {
        const [
          id,
          role,
          name,
          value,
          states,
          cues,
          x,
          y,
          w,
          h,
          flags,
          href,
          container,
          description,
        ] = facts;
        const el: ObservedElement = {
          id,
          role,
          name,
          states: states ? states.split(" ") : [],
          cues: cues ? cues.split(" ") : [],
          box: [x + dx, y + dy, w, h],
          frame: frame.frameId,
          inViewport: (flags & 1) !== 0,
          isNew: (flags & 2) !== 0,
        };
        if (value !== null) el.value = value;
        if (href) el.href = href;
        if (container) el.container = container;
        if (description) el.description = description;
        elements.push(el);
        if (depth === 0) {
          this.#where.set(id, { frameId: frame.frameId, state: frame.state, local: id });
        }
      }
      const nodes = result.nodes ?? [];
      markFrame(nodes, frame.frameId);
      const lines: string[] = [];
      const slots = new Map<number, WireNode[]>();
      for (const line of result.lines) {
        const at = line.indexOf(FRAME_MARK);
        if (at === -1) {
          lines.push(line);
          continue;
        }
        const pad = line.slice(0, at);
        const slot = Number(line.slice(at + 1));
        const info = result.frames.find((f) => f.slot === slot);
        lines.push(`${pad}iframe${info?.name ? ` "${info.name.replace(/"/g, "'")}"` : ""}`);
        const child = kids[slot];
        if (!child || !info || depth >= 8) continue;
        const sub = observeFrame(child, depth + 1, dx + info.box[0], dy + info.box[1]);
        if (!sub) continue;
        for (const subLine of sub.lines) lines.push(`${pad}  ${subLine}`);
        slots.set(slot, sub.nodes);
      }
      return { lines, nodes: stitch(nodes, slots) };
    };
    const observed = observeFrame(main, 0, 0, 0);
    const result = top;
    if (!observed || !result) {
      throw new ProtocolError(`Cannot observe "${page.targetId}": no answer from the page`);
    }

    const lines = new Map<number, string>();
    for (const el of elements) lines.set(el.id, describeLine(el));
    // A new document starts afresh: everything is added.
    const previous = this.#previous.get(page);
    const same = previous && previous.url === result.url ? previous : undefined;
    const before = same?.lines;
    // Lines without an id (text, headings, structure), to report new text in diff mode.
    const texts = new Set<string>();
    for (const line of observed.lines) {
      const trimmed = line.trim();
      if (!trimmed.startsWith("[")) texts.add(trimmed);
    }
    const diff: ObservationDiff = { added: [], removed: [], changed: [] };
    if (before) {
      for (const [id, line] of lines) {
        const old = before.get(id);
        if (old === undefined) diff.added.push(id);
        else if (old !== line) diff.changed.push(id);
      }
      for (const id of before.keys()) if (!lines.has(id)) diff.removed.push(id);
    } else {
      diff.added.push(...lines.keys());
    }
    if (mode !== "viewport") this.#previous.set(page, { url: result.url, lines, texts });

    const { scroll } = result;
    const url = result.url.length > 200 ? `${result.url.slice(0, 199)}…` : result.url;
    const header = `# ${result.title || "(untitled)"}   ${url}   scroll ${scroll.y}/${
      Math.max(0, scroll.height - scroll.vh)
    }`;
    let body: string[];
    if (mode === "diff" && before) {
      body = [];
      for (const id of diff.added) body.push(`+ ${lines.get(id)}`);
      for (const id of diff.changed) body.push(`~ ${lines.get(id)}`);
      for (const id of diff.removed) body.push(`- ${before.get(id)}`);
      let shown = 0;
      for (const text of texts) {
        if (same?.texts.has(text) || text.includes("[")) continue;
        if (++shown > MAX_DIFF_TEXT) break;
        body.push(`+ ${text}`);
      }
      if (!body.length) body.push("(no changes)");
    } else {
      body = observed.lines;
    }
    const observation: Observation = {
      text: [header, ...body].join("\n"),
      elements,
      diff,
      url: result.url,
      title: result.title,
      scroll,
      timing: {
        totalMs: Math.round((performance.now() - started) * 10) / 10,
        pageMs,
        passes: result.passes,
      },
    };
    if (req.tree) observation.tree = observed.nodes;
    return observation;
  }

  /**
   * Where an element lives, with no round trip: its session, the isolated
   * world's context and its frame's own id for it. The actor calls its
   * library there by id (see `ElementResolver.locate`).
   *
   * @param id the element id
   * @returns the location; `undefined` when the id was never given out or its world is gone
   */
  locate(id: number): ElementLocation | undefined {
    const where = this.#where.get(id);
    if (!where) return undefined;
    const executionContextId = where.state.worlds.get(where.frameId);
    if (executionContextId === undefined) return undefined;
    return { session: where.state.session, executionContextId, local: where.local };
  }

  /**
   * Finds the element that has `id` (from an observation by this observer),
   * as CDP handles in its frame's isolated world.
   *
   * @param id the element id
   * @returns the handles, or `undefined` when the id is unknown or its element is gone
   * @throws {TargetClosedError} when the element's target closed
   */
  async resolve(id: number): Promise<ElementHandle | undefined> {
    const where = this.#where.get(id);
    if (!where) return undefined;
    const contextId = where.state.worlds.get(where.frameId);
    if (contextId === undefined) return undefined;
    let answer: CommandResult<"Runtime.callFunctionOn">;
    try {
      answer = await where.state.session.send("Runtime.callFunctionOn", {
        functionDeclaration: ELEMENT_FUNCTION,
        executionContextId: contextId,
        arguments: [{ value: where.local }],
        objectGroup: OBJECT_GROUP,
      });
    } catch (error) {
      if (isContextGone(error)) return undefined;
      throw error;
    }
    const { result } = answer;
    if (answer.exceptionDetails || !result.objectId || result.subtype === "null") return undefined;
    return {
      id,
      session: where.state.session,
      frameId: where.frameId,
      executionContextId: contextId,
      objectId: result.objectId,
    };
  }

  /**
   * Takes a set-of-marks screenshot: the viewport as PNG with a numbered box
   * for each element id in view. The boxes are drawn onto the decoded
   * screenshot in Deno; nothing is added to the page.
   *
   * @param page the page
   * @param observation an observation of the page to mark; a fresh viewport observation when omitted
   * @returns the PNG and the marks drawn
   * @throws {TargetClosedError} when the page closes meanwhile
   */
  async setOfMarks(page: Page, observation?: Observation): Promise<SetOfMarks> {
    const observed = observation ?? await this.observe(page, { mode: "viewport", margin: 0 });
    const [shot, metrics] = await Promise.all([
      page.session.send("Page.captureScreenshot", { format: "png" }),
      page.session.send("Page.getLayoutMetrics"),
    ]);
    const binary = atob(shot.data);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    const image = await decodePng(bytes);
    const scale = image.width / Math.max(1, metrics.cssLayoutViewport.clientWidth);
    const marks: Mark[] = observed.elements
      .filter((el) => el.inViewport)
      .map((el) => ({ id: el.id, box: el.box }));
    drawMarks(image, marks, scale);
    return { png: await encodePng(image), marks, width: image.width, height: image.height };
  }

  /**
   * Whether an observation by this observer ever showed `id`, so a caller
   * can tell an id that was never given out from one whose element is gone.
   *
   * @param id the element id
   * @returns whether the id was given out
   */
  known(id: number): boolean {
    return this.#where.has(id);
  }

  /** The id counter and id map of a frame that is not a page's top frame. */
  #frameIds(frameId: string): FrameIds {
    let ids = this.#frameIdMaps.get(frameId);
    if (!ids) this.#frameIdMaps.set(frameId, ids = { next: 1, global: new Map() });
    return ids;
  }

  /**
   * Turns a frame's own ids into ids of the context, handing out new ones in
   * document order, then formats the frame's lines again from its tree with
   * those ids (the tree, not the text, is where ids are told apart from page
   * text such as "[1]").
   */
  #relabel(frame: FrameInfo, result: DistillResult): void {
    const ids = this.#frameIds(frame.frameId);
    const toGlobal = (local: number): number => {
      let id = ids.global.get(local);
      if (id === undefined) {
        id = this.#nextId++;
        ids.global.set(local, id);
      }
      this.#where.set(id, { frameId: frame.frameId, state: frame.state, local });
      return id;
    };
    for (const facts of result.elements) {
      facts[0] = toGlobal(facts[0]);
      // The thirteenth fact, where the distiller reports it, is the id of the
      // element's container in the same frame (0 for none).
      const all = facts as unknown[];
      const container = all[12];
      if (typeof container === "number" && container > 0) all[12] = toGlobal(container);
    }
    const nodes = result.nodes ?? [];
    relabelNodes(nodes, toGlobal);
    // The distiller prints `*new` only once it has seen the document before.
    const showNew = result.lines.some((line) => line.includes("*new"));
    result.lines = formatNodes(nodes, { showNew });
  }

  #state(session: CdpSession): SessionState {
    const state = this.#sessions.get(session);
    if (!state) throw new Error("Cannot observe: session not prepared");
    return state;
  }

  /** Installs the scripts in a target, once; tracks the isolated world's contexts. */
  #prepare(session: CdpSession): Promise<void> {
    const existing = this.#sessions.get(session);
    if (existing) return existing.ready;
    const worlds = new Map<string, number>();
    const byContext = new Map<number, string>();
    session.on("Runtime.executionContextCreated", ({ context }) => {
      const aux = context.auxData as { frameId?: unknown } | undefined;
      if (context.name !== WORLD_NAME || typeof aux?.frameId !== "string") return;
      worlds.set(aux.frameId, context.id);
      byContext.set(context.id, aux.frameId);
    });
    session.on("Runtime.executionContextDestroyed", ({ executionContextId }) => {
      const frameId = byContext.get(executionContextId);
      byContext.delete(executionContextId);
      if (frameId !== undefined && worlds.get(frameId) === executionContextId) {
        worlds.delete(frameId);
      }
    });
    session.on("Runtime.executionContextsCleared", () => {
      worlds.clear();
      byContext.clear();
      owners.clear();
      if (state) {
        state.treeChanges++;
        state.tree = undefined;
      }
    });
    const ready = (async () => {
      await Promise.all([
        session.send("Page.enable"),
        session.send("Page.addScriptToEvaluateOnNewDocument", {
          source: this.#hookSource,
          runImmediately: true,
        }),
        session.send("Page.addScriptToEvaluateOnNewDocument", {
          source: this.#isolatedSource,
          worldName: WORLD_NAME,
          runImmediately: true,
        }),
        session.send("Runtime.enable"),
      ]);
    })();
    const owners = new Map<string, { contextId: number; objectId: string }>();
    const state: SessionState = { session, worlds, owners, ready, frameCount: 1, treeChanges: 0 };
    // A document replaced drops its child frames, not always with a detach event each.
    session.on("Page.frameNavigated", () => {
      state.treeChanges++;
      state.tree = undefined;
    });
    session.on("Page.frameAttached", () => {
      state.frameCount++;
      state.treeChanges++;
      state.tree = undefined;
    });
    session.on("Page.frameDetached", ({ frameId, reason }) => {
      if (reason !== "swap") state.frameCount--;
      state.treeChanges++;
      state.tree = undefined;
      const owner = owners.get(frameId);
      if (owner && reason !== "swap") {
        owners.delete(frameId);
        bestEffort(
          "releasing a frame owner",
          session.send("Runtime.releaseObject", { objectId: owner.objectId }),
        );
      }
    });
    this.#sessions.set(session, state);
    return ready;
  }

  /** Every frame of the page across its sessions, with parents. */
  async #frames(states: SessionState[]): Promise<FrameInfo[]> {
    const frames: FrameInfo[] = [];
    await Promise.all(states.map(async (state) => {
      let tree = state.tree;
      if (!tree) {
        const changes = state.treeChanges;
        let frameTree;
        try {
          ({ frameTree } = await state.session.send("Page.getFrameTree"));
        } catch (error) {
          if (state.session.closeReason !== undefined) return;
          throw error;
        }
        const list: [string, string | undefined][] = [];
        const visit = (node: typeof frameTree, parentId: string | undefined): void => {
          list.push([node.frame.id, parentId ?? node.frame.parentId]);
          for (const child of node.childFrames ?? []) visit(child, node.frame.id);
        };
        visit(frameTree, undefined);
        tree = list;
        // Kept until a frame attaches, detaches or navigates (the events clear it).
        if (state.treeChanges === changes) state.tree = list;
      }
      for (const [frameId, parentId] of tree) frames.push({ frameId, parentId, state });
    }));
    // A frame listed by two sessions (an out-of-process child seen from its
    // parent) belongs to the session where it is the root.
    const owner = new Map<string, FrameInfo>();
    for (const frame of frames) {
      const seen = owner.get(frame.frameId);
      if (!seen) owner.set(frame.frameId, frame);
      else if (frame.state.session.targetInfo?.targetId === frame.frameId) {
        owner.set(frame.frameId, frame);
      }
    }
    return [...owner.values()];
  }

  /** The isolated world's context in a frame, created if the frame has none yet. */
  async #world(frame: FrameInfo): Promise<number | undefined> {
    const known = frame.state.worlds.get(frame.frameId);
    if (known !== undefined) return known;
    try {
      const { executionContextId } = await frame.state.session.send("Page.createIsolatedWorld", {
        frameId: frame.frameId,
        worldName: WORLD_NAME,
      });
      await frame.state.session.send("Runtime.evaluate", {
        expression: this.#isolatedSource,
        contextId: executionContextId,
      });
      frame.state.worlds.set(frame.frameId, executionContextId);
      return executionContextId;
    } catch (error) {
      if (isContextGone(error)) return undefined;
      throw error;
    }
  }

  /** Runs the distiller in one frame; `undefined` when the frame went away meanwhile. */
  async #distill(
    frame: FrameInfo,
    children: FrameInfo[],
    req: DistillRequest,
    required: boolean,
  ): Promise<DistillResult | undefined> {
    for (let attempt = 0;; attempt++) {
      try {
        const contextId = await this.#world(frame);
        if (contextId === undefined) throw new ProtocolError("Cannot find the frame's context");
        const owners = await Promise.all(
          children.map((child) => this.#owner(frame, child, contextId)),
        );
        const { result, exceptionDetails } = await frame.state.session.send(
          "Runtime.callFunctionOn",
          {
            functionDeclaration: OBSERVE_FUNCTION,
            executionContextId: contextId,
            arguments: [
              { value: req },
              ...owners.map((objectId) => objectId ? { objectId } : { value: null }),
            ],
            returnByValue: true,
          },
        );
        if (exceptionDetails) {
          const text = exceptionDetails.exception?.description ?? exceptionDetails.text;
          throw new ProtocolError(`Distiller failed in frame "${frame.frameId}": ${text}`);
        }
        if (typeof result.value !== "string") {
          throw new ProtocolError(`Distiller gave no answer in frame "${frame.frameId}"`);
        }
        return JSON.parse(result.value) as DistillResult;
      } catch (error) {
        // The kept frame tree may be what is stale: read it afresh next time.
        frame.state.tree = undefined;
        if (frame.state.session.closeReason !== undefined && !required) return undefined;
        if (attempt < 3 && frame.state.owners.size && !isContextGone(error)) {
          // A kept frame owner went stale: resolve the owners afresh.
          this.#dropOwners(frame.state);
          continue;
        }
        if (!isContextGone(error) || attempt >= 3) {
          if (!required) return undefined;
          throw error;
        }
        // The document is being replaced: wait for the new world, then retry.
        frame.state.worlds.delete(frame.frameId);
        await new Promise((resolve) => setTimeout(resolve, 50 * (attempt + 1)));
      }
    }
  }

  /** Forgets (and releases) the kept frame owners of a session. */
  #dropOwners(state: SessionState): void {
    state.owners.clear();
    bestEffort(
      "releasing frame owners",
      state.session.send("Runtime.releaseObjectGroup", { objectGroup: OBJECT_GROUP + "-owners" }),
    );
  }

  /** A remote object, in the parent's isolated world, of the iframe element hosting `child`. */
  async #owner(
    parent: FrameInfo,
    child: FrameInfo,
    contextId: number,
  ): Promise<string | undefined> {
    const kept = parent.state.owners.get(child.frameId);
    if (kept && kept.contextId === contextId) return kept.objectId;
    try {
      const { backendNodeId } = await parent.state.session.send("DOM.getFrameOwner", {
        frameId: child.frameId,
      });
      const { object } = await parent.state.session.send("DOM.resolveNode", {
        backendNodeId,
        executionContextId: contextId,
        objectGroup: OBJECT_GROUP + "-owners",
      });
      if (object.objectId) {
        parent.state.owners.set(child.frameId, { contextId, objectId: object.objectId });
      }
      return object.objectId;
    } catch (error) {
      if (error instanceof ProtocolError) return undefined;
      throw error;
    }
  }
}

/**
 * Replaces every element id in a tree: an element's own, the id of its
 * container, and the scroll box a summary line points to.
 */
function relabelNodes(nodes: WireNode[], map: (id: number) => number): void {
  for (const node of nodes) {
    const refs = node as { container?: unknown; scroll?: unknown };
    if (typeof refs.container === "number") refs.container = map(refs.container);
    if (typeof refs.scroll === "number") refs.scroll = map(refs.scroll);
    if (node.k !== "e") continue;
    if (node.id !== undefined) node.id = map(node.id);
    if (node.c) relabelNodes(node.c, map);
  }
}

/** Sets `frame` on every element with an id. */
function markFrame(nodes: WireNode[], frameId: string): void {
  for (const node of nodes) {
    if (node.k !== "e") continue;
    if (node.id !== undefined) node.frame = frameId;
    if (node.c) markFrame(node.c, frameId);
  }
}

/** Replaces frame slots with the child frames' trees, shifting their boxes. */
function stitch(nodes: WireNode[], slots: Map<number, WireNode[]>): WireNode[] {
  return nodes.map((node): WireNode => {
    if (node.k === "f") {
      const sub = slots.get(node.slot);
      const out: WireElement = { k: "e", role: "iframe" };
      if (node.name) out.name = node.name;
      if (sub?.length) out.c = sub;
      return out;
    }
    if (node.k === "e" && node.c) return { ...node, c: stitch(node.c, slots) };
    return node;
  });
}

function describeLine(el: ObservedElement): string {
  const wire: WireElement = { k: "e", id: el.id, role: el.role, states: el.states, cues: el.cues };
  if (el.name) wire.name = el.name;
  if (el.value !== undefined) wire.value = el.value;
  return describeElement(wire);
}
