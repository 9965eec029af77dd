/**
 * Which frames are distilled in which renderer call. A renderer serves one
 * call at a time: a leaf frame in its parent's process is distilled in the
 * parent's call, and out-of-process sibling frames of one origin (one
 * renderer) in the first one's call.
 *
 * @module
 */
import type { FrameInfo } from "./_frame_worlds.ts";

/** A URL's origin, or `undefined` when it has none to share (opaque, unparsable). */
export function originOf(url: string): string | undefined {
  try {
    const { origin } = new URL(url);
    return origin === "null" ? undefined : origin;
  } catch {
    return undefined;
  }
}

/**
 * The leaf frames each parent distils in its own call, reached through their
 * iframe elements: those in the parent's target whose isolated world exists.
 *
 * @param frames the frames observed, parents first
 * @param parentOf a frame's parent among them
 * @param hasChildren whether a frame has child frames of its own
 * @returns parent → the frames its call distils
 */
export function parentFolds(
  frames: FrameInfo[],
  parentOf: (frame: FrameInfo) => FrameInfo | undefined,
  hasChildren: (frame: FrameInfo) => boolean,
): Map<FrameInfo, FrameInfo[]> {
  const folds = new Map<FrameInfo, FrameInfo[]>();
  for (const frame of frames) {
    const parent = frame.parentId === undefined ? undefined : parentOf(frame);
    if (
      !parent || parent.state !== frame.state || hasChildren(frame) ||
      !frame.state.worlds.has(frame.frameId)
    ) continue;
    const list = folds.get(parent);
    if (list) list.push(frame);
    else folds.set(parent, [frame]);
  }
  return folds;
}

/**
 * Groups leaf frames that are each the root of a target of their own by
 * parent and by the origin they last showed (same origin under one parent:
 * one renderer). Each group of two or more maps its first frame to the
 * others. A frame not distilled before has no origin yet and goes alone.
 *
 * @param leaves frames without child frames, in frame order
 * @param parentOf a frame's parent among the observed frames
 * @returns first frame of a group → the rest of the group
 */
export function siblingBatches(
  leaves: FrameInfo[],
  parentOf: (frame: FrameInfo) => FrameInfo | undefined,
): Map<FrameInfo, FrameInfo[]> {
  const groups = new Map<string, FrameInfo[]>();
  for (const frame of leaves) {
    const parent = parentOf(frame);
    const origin = frame.state.origin;
    if (!parent || parent.state === frame.state || origin === undefined) continue;
    const key = `${parent.frameId} ${origin}`;
    const group = groups.get(key);
    if (group) group.push(frame);
    else groups.set(key, [frame]);
  }
  const batches = new Map<FrameInfo, FrameInfo[]>();
  for (const [first, ...rest] of groups.values()) {
    if (first && rest.length) batches.set(first, rest);
  }
  return batches;
}
