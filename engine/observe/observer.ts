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
import type { DistillRequest, DistillResult, FrameVeto, WireBox, WireNode } from "./wire.ts";
import { ProtocolError } from "../cdp/errors.ts";
import { formatNodes, FRAME_MARK } from "./format_observation.ts";
import { HOOK_SCRIPT, ISOLATED_SCRIPT, PAGE_BUNDLE_VERSION } from "./_page_bundle.ts";
// The actor calls its in-page functions on handles from this world; installed
// with the world, they cost nothing per call (see `_library.ts`).
import { ACT_LIBRARY } from "../act/_library.ts";
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
import { markFrame, relabelNodes, stitch, uncover, unlabel, VETO_TEXT } from "./_stitch.ts";
import { diffObservation, type SeenPage } from "./_diff.ts";
import { originOf, parentFolds, siblingBatches } from "./_frame_plan.ts";
import type {
  ElementHandle,
  Observation,
  ObservedElement,
  ObserveOptions,
  SetOfMarks,
} from "./observation.ts";

interface FrameIds {
  /** The next id the frame's distiller hands out. */
  next: number;
  /** The frame's ids → ids of the context. */
  global: Map<number, number>;
}

const ELEMENT_FUNCTION = "function(id) { return globalThis.__webserv.element(id); }";

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
  #worlds: FrameWorlds;
  /** id → frame id, session and the frame's own id, for the ids handed out so far. */
  #where = new Map<number, { frameId: string; state: SessionState; local: number }>();
  /** Per frame other than a top one: its own id counter, and its ids → the context's ids. */
  #frameIdMaps = new Map<string, FrameIds>();
  #previous = new WeakMap<Page, SeenPage>();

  private constructor() {
    const hook = `(() => { ${HOOK_SCRIPT}; __webservHook.installHook(${
      JSON.stringify(this.#secret)
    }); })();`;
    const isolated = `(() => { ${ISOLATED_SCRIPT}; __webservIsolated.installIsolated(${
      JSON.stringify(this.#secret)
    }, ${JSON.stringify(PAGE_BUNDLE_VERSION)}); })();\n${ACT_LIBRARY}`;
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
      sessions.map((s) => this.#worlds.prepare(s).then(() => this.#worlds.state(s))),
    );
    // A page with one frame and no out-of-process children needs no frame
    // tree: its one world belongs to the main frame, whose id is the target's.
    const only = states.length === 1 ? states[0]! : undefined;
    const frames = only && only.worlds.size === 1 && only.worlds.has(page.targetId) &&
        only.frameCount === 1
      ? [{ frameId: page.targetId, parentId: undefined, state: only }]
      : await this.#worlds.frames(states);
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
    const parentOf = (frame: FrameInfo) => reachable.find((f) => f.frameId === frame.parentId);
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
    const top = distilled.get(main);
    if (top) this.#nextId = top.nextId;
    const observeFrame = (
      frame: FrameInfo,
      depth: number,
      dx: number,
      dy: number,
      veto: FrameVeto | undefined,
      covers: WireBox[] | undefined,
    ): { lines: string[]; nodes: WireNode[] } | undefined => {
      const kids = children(frame.frameId);
      const result = distilled.get(frame);
      if (!result) return undefined;
      pageMs += result.ms;
      // Nobody can act in a frame its parent made inert, hid or covered with a modal: text only.
      if (veto) unlabel(result);
      else if (depth > 0) {
        if (covers?.length) uncover(result, covers);
        this.#relabel(frame, result);
      }
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
        const why = info?.veto ? ` (${VETO_TEXT[info.veto]})` : "";
        lines.push(`${pad}iframe${info?.name ? ` "${info.name.replace(/"/g, "'")}"` : ""}${why}`);
        const child = kids[slot];
        if (!child || !info || depth >= 8) continue;
        const sub = observeFrame(
          child,
          depth + 1,
          dx + info.box[0],
          dy + info.box[1],
          veto ?? info.veto,
          info.covers,
        );
        if (!sub) continue;
        for (const subLine of sub.lines) lines.push(`${pad}  ${subLine}`);
        slots.set(slot, sub.nodes);
      }
      return { lines, nodes: stitch(nodes, slots) };
    };
    const observed = observeFrame(main, 0, 0, 0, undefined, undefined);
    const result = top;
    if (!observed || !result) {
      throw new ProtocolError(`Cannot observe "${page.targetId}": no answer from the page`);
    }

    const previous = this.#previous.get(page);
    const { diff, body, seen } = diffObservation(
      elements,
      observed.lines,
      result.url,
      previous,
      mode,
    );
    if (mode !== "viewport") this.#previous.set(page, seen);
    const { scroll } = result;
    const url = result.url.length > 200 ? `${result.url.slice(0, 199)}…` : result.url;
    const header = `# ${result.title || "(untitled)"}   ${url}   scroll ${scroll.y}/${
      Math.max(0, scroll.height - scroll.vh)
    }`;
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
}
