/**
 * The pure parts of `Observer.observe`'s passes: its options in one
 * function (defaults and limits), the plan and place of frames, an element
 * decoded from its frame's wire facts, and a frame's lines spliced into its
 * parent's.
 *
 * @module
 */
import type { Page } from "../browser/page.ts";
import type { FrameInfo } from "./_frame_worlds.ts";
import { describeElement, FRAME_MARK, INDENT } from "./format_observation.ts";
import type { ObservedElement, ObserveOptions } from "./observation.ts";
import { VETO_TEXT } from "./_stitch.ts";
import type {
  DistillRequest,
  DistillResult,
  FrameVeto,
  WireBox,
  WireFacts,
  WireNode,
} from "./wire.ts";

/** How deep frames are observed. */
export const MAX_FRAME_DEPTH = 8;

/** One observation's options with their defaults, and when it began. */
export interface ObserveRun {
  /** The mode the caller asked for (`diff` is a page observation diffed). */
  mode: NonNullable<ObserveOptions["mode"]>;
  /** What each frame's distiller is asked. */
  req: DistillRequest;
  /** `performance.now()` when the observation began. */
  started: number;
}

/** The observer's options, defaults and limits in one place; ids go on from `nextId`. */
export function observeRun(options: ObserveOptions, nextId: number): ObserveRun {
  const mode = options.mode ?? "page";
  return {
    mode,
    started: performance.now(),
    req: {
      nextId,
      mode: mode === "viewport" ? "viewport" : "page",
      margin: options.margin ?? 300,
      summariseAfter: options.summariseAfter ?? 20,
      keepItems: options.keepItems ?? 5,
      maxText: options.maxText ?? 100,
      tree: options.tree ?? false,
    },
  };
}

/** The frames of one observation (pass 1). */
export interface FramePlan {
  page: Page;
  main: FrameInfo;
  /** The main frame and every frame below it, eight deep at most. */
  reachable: FrameInfo[];
  children(frameId: string): FrameInfo[];
  parentOf(frame: FrameInfo): FrameInfo | undefined;
}

/** Where a frame sits in the page, and what its owners made of it. */
export interface FramePlace {
  dx: number;
  dy: number;
  veto: FrameVeto | undefined;
  covers: WireBox[] | undefined;
}

/** The page put together from its frames (pass 3). */
export interface Assembled {
  lines: string[];
  nodes: WireNode[];
  elements: ObservedElement[];
  /** Time spent in the page's distillers. */
  pageMs: number;
}

/** One element of a frame's answer, in page coordinates. */
export function elementOf(
  facts: WireFacts,
  frameId: string,
  dx: number,
  dy: number,
): ObservedElement {
  const [id, role, name, value, states, cues, x, y, w, h, flags, href, container, description] =
    facts;
  const el: ObservedElement = {
    id,
    role,
    name,
    states: states ? states.split(" ") : [],
    cues: cues ? cues.split(" ") : [],
    box: [x + dx, y + dy, w, h],
    frame: frameId,
    inViewport: (flags & 1) !== 0,
    isNew: (flags & 2) !== 0,
  };
  if (value !== null) el.value = value;
  if (href) el.href = href;
  if (container) el.container = container;
  if (description) el.description = description;
  return el;
}

/**
 * A frame's lines with each child frame's lines in place of its owner's
 * marker line (`FRAME_MARK` and the owner's slot), indented under an
 * `iframe` line; `child` returns the child's lines, if it has any.
 */
export function spliceFrames(
  result: DistillResult,
  child: (slot: number, info: DistillResult["frames"][number]) => string[] | undefined,
): string[] {
  const lines: string[] = [];
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
    // The iframe's line as any element's: its name bare unless the reason follows it.
    const head = describeElement(
      { k: "e", role: "iframe", ...info?.name ? { name: info.name } : {} },
      true,
      why !== "",
    );
    lines.push(`${pad}${head}${why}`);
    if (!info) continue;
    for (const subLine of child(slot, info) ?? []) lines.push(`${pad}${INDENT}${subLine}`);
  }
  return lines;
}
