/**
 * Which frames are distilled in which renderer call: out-of-process sibling
 * frames of one origin share a renderer, so one call serves them all.
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
