/**
 * The render barriers settling runs in its own isolated world (see
 * `engine/settle/_session_tracker.ts`); bundled by `deno task build` into
 * `SETTLE_BARRIER` and `SETTLE_ANIMATIONS`. Running in an isolated world, the
 * page's own `requestAnimationFrame` is neither used nor seen.
 *
 * @module
 */

/**
 * Waits for two animation frames, so work a rendering step queues (scroll
 * events, IntersectionObserver and ResizeObserver callbacks) has run. A
 * hidden document renders no frames and passes at once.
 *
 * @returns `true` once passed
 */
export function barrier(): Promise<boolean> {
  return new Promise((resolve) => {
    if (document.visibilityState === "hidden") return resolve(true);
    requestAnimationFrame(() => requestAnimationFrame(() => resolve(true)));
  });
}

/**
 * Properties whose animation changes only how something looks, never what
 * an agent can see or act on: colours, shadows, outlines. A todo item's
 * 0.4 s colour fade as it is marked done is no reason to wait.
 */
const COSMETIC = new Set([
  "color",
  "backgroundColor",
  "borderColor",
  "borderTopColor",
  "borderRightColor",
  "borderBottomColor",
  "borderLeftColor",
  "borderBlockColor",
  "borderInlineColor",
  "outlineColor",
  "outlineOffset",
  "textDecorationColor",
  "textEmphasisColor",
  "columnRuleColor",
  "caretColor",
  "accentColor",
  "fill",
  "stroke",
  "boxShadow",
  "textShadow",
]);

/** Keys of a keyframe that are not properties. */
const NOT_PROPERTIES = new Set(["offset", "computedOffset", "easing", "composite"]);

/**
 * Whether an animation changes what an agent can see or act on: a box
 * (size, place, transform), visibility, content, pointer events, or opacity
 * to or from 0 (a fade in or out). Colour and shadow transitions do not;
 * opacity between two visible values (a hover dimming) does not either. An
 * animation whose keyframes cannot be read counts.
 */
function changesWhatIsSeen(animation: Animation): boolean {
  const effect = animation.effect as KeyframeEffect | null;
  if (!effect || typeof effect.getKeyframes !== "function") return true;
  let frames: ComputedKeyframe[];
  try {
    frames = effect.getKeyframes();
  } catch {
    return true;
  }
  const properties = new Set<string>();
  const transition = (animation as Animation & { transitionProperty?: string }).transitionProperty;
  if (transition) {
    properties.add(transition.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()));
  }
  for (const frame of frames) {
    for (const key of Object.keys(frame)) if (!NOT_PROPERTIES.has(key)) properties.add(key);
  }
  if (properties.size === 0) return true;
  for (const property of properties) {
    if (COSMETIC.has(property)) continue;
    if (property === "opacity") {
      // Only a fade to or from nothing changes what is seen.
      if (frames.some((frame) => Number(frame.opacity) === 0)) return true;
      continue;
    }
    return true;
  }
  return false;
}

/**
 * Every animation of the document and of the open shadow roots in it:
 * `document.getAnimations()` leaves out those whose target is in a shadow
 * tree (a web component's dialog fading out, Shoelace's), which each root
 * lists for itself. A closed root is out of this world's reach.
 */
function allAnimations(): Animation[] {
  const found = document.getAnimations();
  const visit = (root: Document | ShadowRoot) => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const shadow = (node as Element).shadowRoot;
      if (!shadow) continue;
      found.push(...shadow.getAnimations());
      visit(shadow);
    }
  };
  visit(document);
  return found;
}

/**
 * Waits, at most `budgetMs` in all, for the CSS transitions, CSS animations
 * and Web Animations running in the document and its open shadow roots (a dropdown fading and sliding
 * in) that change what an agent can see or act on to end (not colour or
 * shadow transitions), then for two animation frames. Endless animations (a spinner)
 * and those ending later than `budgetMs` from now are not waited for. New
 * ones started meanwhile (the staggered items of a menu) are, within the
 * same budget.
 *
 * @param budgetMs how long to wait for animations at most
 * @returns how many animations it waited for
 */
export function animations(budgetMs: number): Promise<number> {
  return new Promise((resolve) => {
    if (document.visibilityState === "hidden") return resolve(0);
    const end = performance.now() + budgetMs;
    const waited = new Set<Animation>();
    const check = () => {
      const left = end - performance.now();
      let longest = 0;
      for (const animation of allAnimations()) {
        if (animation.playState !== "running" || !animation.effect) continue;
        if (!changesWhatIsSeen(animation)) continue;
        const timing = animation.effect.getComputedTiming();
        const rate = Math.abs(animation.playbackRate) || 1;
        const now = Number(animation.currentTime ?? 0);
        const remaining = animation.playbackRate < 0
          ? now / rate
          : (Number(timing.endTime) - now) / rate;
        if (!Number.isFinite(remaining) || remaining <= 0 || remaining > left) continue;
        waited.add(animation);
        longest = Math.max(longest, remaining);
      }
      if (longest > 0) setTimeout(check, Math.min(longest, left) + 1);
      else requestAnimationFrame(() => requestAnimationFrame(() => resolve(waited.size)));
    };
    check();
  });
}
