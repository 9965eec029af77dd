/**
 * The seeds the server holds state for: a seeded template (fixture), spares
 * and a known base (incus, docker), a running runtime (shared). A seed is
 * held while a session runs on it; once its last session closes it is idle,
 * and after a grace period its state is retired (the sandbox's `retire`).
 * At most `max` seeds are held: a new seed past the cap retires the least
 * recently used idle seed at once, and is refused with 429 when every held
 * seed is busy. Seeds warmed at start are pinned: held, counted, never
 * retired.
 *
 * @module
 */
import { logFailure } from "../../engine/log.ts";
import type { Instance, Sandbox } from "../../sandboxes/mod.ts";
import { HttpError } from "./http_error.ts";

/** Options of {@linkcode SeedBook}. */
export interface SeedBookOptions {
  /** The cap on seeds held at once. */
  max: number;
  /** How long an idle seed keeps its state, in milliseconds. */
  graceMs: number;
}

interface Entry {
  key: string;
  live: number;
  lastUsed: number;
  pinned: boolean;
  retire: () => Promise<void>;
  timer?: ReturnType<typeof setTimeout>;
}

/** Which seeds hold state, for how many sessions, and when to retire them. */
export class SeedBook {
  #options: SeedBookOptions;
  #entries = new Map<string, Entry>();
  #retiring = new Map<string, Promise<void>>();
  #retired = 0;

  /** @param options the cap and the grace period */
  constructor(options: SeedBookOptions) {
    this.#options = options;
  }

  /** Seeds held now (busy, idle in their grace period, or pinned). */
  get held(): number {
    return this.#entries.size;
  }

  /** Seeds retired so far. */
  get retired(): number {
    return this.#retired;
  }

  /**
   * Holds a seed for one session, until the release is called.
   *
   * @param key the sandbox and seed, such as `shop/3`
   * @param retire lets go of the seed's state
   * @returns the release, safe to call twice
   * @throws {HttpError} 429 when the seed is new, the cap is reached and every held seed is busy
   */
  async acquire(key: string, retire: () => Promise<void>): Promise<() => void> {
    const entry = await this.#hold(key, retire, false);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.live--;
      entry.lastUsed = performance.now();
      if (entry.live === 0 && !entry.pinned) this.#schedule(entry);
    };
  }

  /**
   * Holds a seed for good (a warmed seed): counted, never retired.
   *
   * @param key the sandbox and seed
   * @param retire lets go of the seed's state (unused while pinned)
   * @throws {HttpError} 429 past the cap
   */
  async pin(key: string, retire: () => Promise<void>): Promise<void> {
    await this.#hold(key, retire, true);
  }

  /**
   * Whether a sandbox has a seed with a live session, or pinned.
   *
   * @param sandbox the sandbox's key
   * @returns whether it is busy
   */
  busy(sandbox: string): boolean {
    for (const entry of this.#entries.values()) {
      if (entry.key.startsWith(`${sandbox}/`) && (entry.live > 0 || entry.pinned)) return true;
    }
    return false;
  }

  /**
   * Drops a sandbox's idle seeds without retiring them (its close lets go of their state).
   *
   * @param sandbox the sandbox's key
   */
  forget(sandbox: string): void {
    for (const entry of [...this.#entries.values()]) {
      if (entry.key.startsWith(`${sandbox}/`) && entry.live === 0 && !entry.pinned) {
        clearTimeout(entry.timer);
        this.#entries.delete(entry.key);
      }
    }
  }

  /** Stops the grace timers (the sandboxes' close lets go of the rest). */
  close(): void {
    for (const entry of this.#entries.values()) clearTimeout(entry.timer);
  }

  async #hold(key: string, retire: () => Promise<void>, pinned: boolean): Promise<Entry> {
    // A seed being retired is held again once its state is gone.
    for (let retiring = this.#retiring.get(key); retiring; retiring = this.#retiring.get(key)) {
      await retiring;
    }
    let entry = this.#entries.get(key);
    let evicted: Promise<void> | undefined;
    if (!entry) {
      if (this.#entries.size >= this.#options.max) {
        const victim = this.#idlest();
        if (!victim) {
          throw new HttpError(
            429,
            "seed-capacity",
            `Cannot open seed "${key}": ${this.#entries.size} of ${this.#options.max} seeds are ` +
              "held and every one has a live session (--max-seeds); retry when a session closes, " +
              "or use a seed already held",
            { "Retry-After": "5" },
          );
        }
        evicted = this.#retire(victim);
      }
      entry = { key, live: 0, lastUsed: performance.now(), pinned, retire };
      this.#entries.set(key, entry);
    }
    clearTimeout(entry.timer);
    entry.pinned ||= pinned;
    entry.live++;
    // The new seed's state is made once the evicted one's is gone: at most `max` at once.
    if (evicted) await evicted;
    return entry;
  }

  #idlest(): Entry | undefined {
    let idlest: Entry | undefined;
    for (const entry of this.#entries.values()) {
      if (entry.live > 0 || entry.pinned) continue;
      if (!idlest || entry.lastUsed < idlest.lastUsed) idlest = entry;
    }
    return idlest;
  }

  #schedule(entry: Entry): void {
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => {
      if (entry.live === 0 && this.#entries.get(entry.key) === entry) {
        this.#retire(entry).catch(() => {});
      }
    }, this.#options.graceMs);
    Deno.unrefTimer(entry.timer);
  }

  #retire(entry: Entry): Promise<void> {
    clearTimeout(entry.timer);
    this.#entries.delete(entry.key);
    this.#retired++;
    const retiring = entry.retire()
      .catch((error) => logFailure(`retire seed "${entry.key}"`, error))
      .finally(() => this.#retiring.delete(entry.key));
    this.#retiring.set(entry.key, retiring);
    return retiring;
  }
}

/**
 * A sandbox whose instances hold their seed in `book` from `create()` to
 * `destroy()`; the seed's state is retired through the sandbox's `retire`.
 *
 * @param sandbox the sandbox
 * @param key the sandbox's key (its site, and placement target)
 * @param book the seeds held
 * @returns the sandbox, its instances counted
 */
export function seededSandbox(sandbox: Sandbox, key: string, book: SeedBook): Sandbox {
  return {
    kind: sandbox.kind,
    async create(spec = {}) {
      const seed = spec.seed ?? 0;
      const release = await book.acquire(`${key}/${seed}`, () => retireSeed(sandbox, seed));
      try {
        return releasing(await sandbox.create(spec), release);
      } catch (error) {
        release();
        throw error;
      }
    },
    close: () => sandbox.close(),
    [Symbol.asyncDispose]: () => sandbox.close(),
  };
}

/**
 * Lets go of a seed's state, when the sandbox keeps any.
 *
 * @param sandbox the sandbox
 * @param seed the seed
 */
export async function retireSeed(sandbox: Sandbox, seed: number): Promise<void> {
  await sandbox.retire?.(seed);
}

/** The instance, its destroy releasing its seed once. */
function releasing(instance: Instance, release: () => void): Instance {
  const destroy = async () => {
    try {
      await instance.destroy();
    } finally {
      release();
    }
  };
  return new Proxy(instance, {
    get(target, property) {
      if (property === "destroy" || property === Symbol.asyncDispose) return destroy;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
