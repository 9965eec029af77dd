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
 *   frames in parallel in their renderers); a leaf frame in its parent's
 *   process (a same-origin iframe) is distilled in its parent's call, through
 *   its iframe element, so a renderer answers one call per page, not one per
 *   frame. A page's top frame hands out ids
 *   from the observer's counter; every other frame hands out ids from a
 *   counter of its own, mapped here to ids of the context in frame order the
 *   first time they are shown, so ids are unique across frames and tabs of
 *   the context and never reused, and a frame's element keeps its id.
 * - Ids resolve back to elements with {@linkcode Observer.resolve}, which
 *   asks the frame's isolated world for the element; the actions engine uses
 *   that (it implements `ElementResolver`).
 *
 * The observation's types are in `observation.ts`; targets, worlds and the
 * distiller call per frame in `_frame_worlds.ts`; stitching frames in
 * `_stitch.ts`.
 *
 * @module
 */
import type { BrowserContext } from "../browser/browser_context.ts";
import type { Page } from "../browser/page.ts";
import type { CommandResult } from "../cdp/protocol.ts";
import type { DistillRequest, DistillResult, WireNode } from "./wire.ts";
import { ProtocolError } from "../cdp/errors.ts";
import { formatNodes } from "./format_observation.ts";
import {
  ACT_INSTALL,
  ELEMENT_CALL,
  HOOK_INSTALL,
  ISOLATED_INSTALL,
  PAGE_BUNDLE_VERSION,
} from "./_page_bundle.ts";
// The actor calls its in-page functions (`ACT_INSTALL`, from engine/page/act/)
// on elements of this world by name: installed with the world, they cost a
// short stub per call (see `engine/act/_calls.ts`).
import type { ElementLocation } from "../act/element_resolver.ts";
import { decodePng, encodePng } from "./_png.ts";
import { drawMarks, type Mark } from "./set_of_marks.ts";
import {
  type FrameInfo,
  FrameWorlds,
  isContextGone,
  OBJECT_GROUP,
  type SessionState,
} from "./_frame_worlds.ts";
import { markFrame, relabelNodes, stitch, uncover, unlabel } from "./_stitch.ts";
import {
  type Assembled,
  elementOf,
  type FramePlace,
  type FramePlan,
  MAX_FRAME_DEPTH,
  type ObserveRun,
  observeRun,
  spliceFrames,
} from "./_observe_passes.ts";
import { diffObservation, type SeenPage } from "./_diff.ts";
import { originOf, parentFolds, siblingBatches } from "./_frame_plan.ts";
import type { ElementHandle, Observation, ObserveOptions, SetOfMarks } from "./observation.ts";

interface FrameIds {
  /** The next id the frame's distiller hands out. */
  next: number;
  /** The frame's ids → ids of the context. */
  global: Map<number, number>;
}

function randomSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `x${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * Observes the pages of one browser context: one observer per episode, so
 * ids are unique across its pages and frames and never reused.
 *
 * @example Observe a page, then find the element behind an id
 * ```ts ignore
 * import { Browser, newContext, Observer } from "@webserv/webserv/engine";
 * await using browser = await Browser.launch();
 * const context = await newContext(browser);
 * const observer = Observer.attach(context); // before the pages open
 * const page = await context.newPage("data:text/html,<button>Go</button>");
 * const { text, elements } = await observer.observe(page);
 * console.log(text); // # (untitled) … \n[1] button Go
 * const handle = await observer.resolve(elements[0]!.id);
 * // handle.session + handle.objectId: call DOM.scrollIntoViewIfNeeded, DOM.getContentQuads, …
 * const changes = await observer.observe(page, { mode: "diff" });
 * const marks = await observer.setOfMarks(page); // marks.png: Uint8Array
 * ```
 */
export class Observer {
  #secret = randomSecret();
  #nextId = 1;
  #worlds: FrameWorlds;
  /** id → frame id, session and the frame's own id, for the ids handed out so far. */
  #where = new Map<number, { frameId: string; state: SessionState; local: number }>();
  /** Per frame other than a top one: its own id counter, and its ids → the context's ids. */
  #frameIdMaps = new Map<string, FrameIds>();
  #previous = new WeakMap<Page, SeenPage>();

  private constructor() {
    // Scripts that call the bundle's declarations (engine/page/) with their arguments.
    const hook = `(${HOOK_INSTALL})(${JSON.stringify(this.#secret)});`;
    const isolated = `(${ISOLATED_INSTALL})(${JSON.stringify(this.#secret)}, ${
      JSON.stringify(PAGE_BUNDLE_VERSION)
    });\n(${ACT_INSTALL})();`;
    this.#worlds = new FrameWorlds(hook, isolated);
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
    context.addInitializer(({ session }) => observer.#worlds.prepare(session));
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
    // One typed result, built by named passes in order.
    const run = observeRun(options, this.#nextId);
    const plan = await this.#planFrames(page);
    const distilled = await this.#distillFrames(plan, run.req);
    const top = distilled.get(plan.main);
    if (top) this.#nextId = top.nextId;
    const assembled = this.#assemble(plan, distilled);
    if (!assembled || !top) {
      throw new ProtocolError(`Cannot observe "${page.targetId}": no answer from the page`);
    }
    return this.#finish(page, run, top, assembled);
  }

  /**
   * Pass 1: the frames to observe, the main frame first, nested eight deep
   * at most. A page with one frame and no out-of-process children needs no
   * frame tree: its one world belongs to the main frame, whose id is the
   * target's.
   */
  async #planFrames(page: Page): Promise<FramePlan> {
    const sessions = [page.session, ...page.frameSessions];
    const states = await Promise.all(
      sessions.map((s) => this.#worlds.prepare(s).then(() => this.#worlds.state(s))),
    );
    const only = states.length === 1 ? states[0]! : undefined;
    const frames = only && only.worlds.size === 1 && only.worlds.has(page.targetId) &&
        only.frameCount === 1
      ? [{ frameId: page.targetId, parentId: undefined, state: only }]
      : await this.#worlds.frames(states);
    const main = frames.find((f) => f.state.session === page.session && f.parentId === undefined);
    if (!main) throw new ProtocolError(`Cannot observe "${page.targetId}": it has no main frame`);
    const children = (frameId: string) => frames.filter((f) => f.parentId === frameId);
    const reachable: FrameInfo[] = [];
    const reach = (frame: FrameInfo, depth: number) => {
      reachable.push(frame);
      if (depth < MAX_FRAME_DEPTH) {
        for (const kid of children(frame.frameId)) reach(kid, depth + 1);
      }
    };
    reach(main, 0);
    return {
      page,
      main,
      reachable,
      children,
      parentOf: (frame) => reachable.find((f) => f.frameId === frame.parentId),
    };
  }

  /**
   * Pass 2: every frame distilled at once (out-of-process frames in their
   * own renderers, in parallel; same-origin children folded into their
   * parent's call, out-of-process siblings of one origin in one call). The
   * top frame hands out ids from the observer's counter; any other frame
   * hands out ids of its own (a counter per frame), which become ids of the
   * context in pass 3, in frame order, the first time the frame shows them;
   * see `#frameIds`.
   */
  async #distillFrames(
    plan: FramePlan,
    req: DistillRequest,
  ): Promise<Map<FrameInfo, DistillResult | undefined>> {
    const { page, main, reachable, children, parentOf } = plan;
    const distilled = new Map<FrameInfo, DistillResult | undefined>();
    const frameReq = (frame: FrameInfo): DistillRequest =>
      frame === main ? req : {
        ...req,
        nextId: this.#frameIds(frame.frameId).next,
        tree: true,
        frameId: frame.frameId,
      };
    const record = (frame: FrameInfo, result: DistillResult | undefined) => {
      if (result && frame !== main) {
        const ids = this.#frameIds(frame.frameId);
        ids.next = Math.max(ids.next, result.nextId);
        if (frame.state.session !== page.session) {
          const origin = originOf(result.url);
          if (origin === undefined) delete frame.state.origin;
          else frame.state.origin = origin;
        }
      }
      distilled.set(frame, result);
    };
    const folds = parentFolds(reachable, parentOf, (frame) => children(frame.frameId).length > 0);
    const folded = new Set([...folds.values()].flat());
    const siblings = siblingBatches(
      reachable.filter((f) => !folded.has(f) && children(f.frameId).length === 0),
      parentOf,
    );
    const batched = new Set([...siblings.values()].flat());
    await Promise.all(
      reachable.filter((f) => !folded.has(f) && !batched.has(f)).map(async (frame) => {
        const kids = children(frame.frameId);
        const inCall = folds.get(frame) ?? [];
        const others = siblings.get(frame) ?? [];
        const ask: DistillRequest = { ...frameReq(frame) };
        if (inCall.length) {
          ask.folds = inCall.map((kid) => ({ slot: kids.indexOf(kid), req: frameReq(kid) }));
        }
        if (others.length) {
          ask.siblings = others.map((other) => ({ frameId: other.frameId, req: frameReq(other) }));
        }
        const result = await this.#worlds.distill(frame, kids, ask, frame === main);
        const answers = result?.folded;
        const found = result?.siblings;
        if (result) {
          delete result.folded;
          delete result.siblings;
        }
        record(frame, result);
        // A frame the call could not reach is distilled on its own.
        await Promise.all([...inCall, ...others].map(async (kid, i) => {
          const answer = i < inCall.length ? answers?.[i] : found?.[i - inCall.length];
          record(kid, answer ?? await this.#worlds.distill(kid, [], frameReq(kid), false));
        }));
      }),
    );
    return distilled;
  }

  /**
   * Pass 3: the frames' answers as one page, top down: each frame's
   * elements in page coordinates and context ids (a vetoed frame's as text
   * only), and its lines and tree spliced in at its owner's line.
   */
  #assemble(
    plan: FramePlan,
    distilled: Map<FrameInfo, DistillResult | undefined>,
  ): Assembled | undefined {
    const assembled: Assembled = { lines: [], nodes: [], elements: [], pageMs: 0 };
    const frame = (
      info: FrameInfo,
      depth: number,
      at: FramePlace,
    ): { lines: string[]; nodes: WireNode[] } | undefined => {
      const result = distilled.get(info);
      if (!result) return undefined;
      assembled.pageMs += result.ms;
      // Nobody can act in a frame its parent made inert, hid or covered with a modal: text only.
      if (at.veto) unlabel(result);
      else if (depth > 0) {
        if (at.covers?.length) uncover(result, at.covers);
        this.#relabel(info, result);
      }
      for (const facts of result.elements) {
        const el = elementOf(facts, info.frameId, at.dx, at.dy);
        assembled.elements.push(el);
        if (depth === 0) {
          this.#where.set(el.id, { frameId: info.frameId, state: info.state, local: el.id });
        }
      }
      const nodes = result.nodes ?? [];
      markFrame(nodes, info.frameId);
      const kids = plan.children(info.frameId);
      const slots = new Map<number, WireNode[]>();
      const lines = spliceFrames(result, (slot, info2) => {
        const child = kids[slot];
        if (!child || depth >= MAX_FRAME_DEPTH) return undefined;
        const sub = frame(child, depth + 1, {
          dx: at.dx + info2.box[0],
          dy: at.dy + info2.box[1],
          veto: at.veto ?? info2.veto,
          covers: info2.covers,
        });
        if (sub) slots.set(slot, sub.nodes);
        return sub?.lines;
      });
      return { lines, nodes: stitch(nodes, slots) };
    };
    const top = frame(plan.main, 0, { dx: 0, dy: 0, veto: undefined, covers: undefined });
    if (!top) return undefined;
    assembled.lines = top.lines;
    assembled.nodes = top.nodes;
    return assembled;
  }

  /** Pass 4: the diff against the page's last observation, the header line and the timings. */
  #finish(page: Page, run: ObserveRun, top: DistillResult, assembled: Assembled): Observation {
    const { mode } = run;
    const { diff, body, seen } = diffObservation(
      assembled.elements,
      assembled.lines,
      top.url,
      this.#previous.get(page),
      mode,
    );
    if (mode !== "viewport") this.#previous.set(page, seen);
    const { scroll } = top;
    const url = top.url.length > 200 ? `${top.url.slice(0, 199)}…` : top.url;
    // A page that does not scroll says nothing with `scroll 0/0`: the header leaves it out.
    const scrollMax = Math.max(0, scroll.height - scroll.vh);
    const header = `# ${top.title || "(untitled)"}   ${url}${
      scrollMax > 0 || scroll.y > 0 ? `   scroll ${scroll.y}/${scrollMax}` : ""
    }`;
    // What appeared and went since the last observation (a "Copied!" flash, a toast).
    const flashed = top.flashed?.length
      ? [`flashed: ${top.flashed.map((text) => JSON.stringify(text)).join(" · ")}`]
      : [];
    const observation: Observation = {
      text: [header, ...flashed, ...body].join("\n"),
      elements: assembled.elements,
      diff,
      url: top.url,
      title: top.title,
      scroll,
      timing: {
        totalMs: Math.round((performance.now() - run.started) * 10) / 10,
        pageMs: assembled.pageMs,
        passes: top.passes,
      },
    };
    if (run.req.tree) observation.tree = assembled.nodes;
    if (top.flashed?.length) observation.flashed = top.flashed;
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
        functionDeclaration: ELEMENT_CALL,
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
}
