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
 * Waits, at most `budgetMs` in all, for the CSS transitions, CSS animations
 * and Web Animations running in the document (a dropdown fading and sliding
 * in) to end, then for two animation frames. Endless animations (a spinner)
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
      for (const animation of document.getAnimations()) {
        if (animation.playState !== "running" || !animation.effect) continue;
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
