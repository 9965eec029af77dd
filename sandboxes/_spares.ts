/**
 * Spare containers: launched ahead, per seed, so that `create()` and a
 * re-copying `reset()` take one that already answers instead of waiting for a
 * copy, a start and the site's boot. Taking one starts a replacement in the
 * background. A spare that died while waiting is removed and never handed
 * out.
 *
 * @module
 */
import type { Container } from "./_container_instance.ts";
import { logFailure } from "../engine/log.ts";

/** What spares need of a backend. */
export interface SpareBackend {
  /** Launches a ready container. */
  launch(seed: number): Promise<Container>;
  /** Removes a container. */
  remove(container: Container): Promise<void>;
  /** Throws when a container is not running. */
  probe(container: Container): Promise<void>;
}

/** Keeps `count` ready containers per seed in use. */
export class Spares {
  #backend: SpareBackend;
  #count: number;
  #ready = new Map<number, Container[]>();
  #filling = new Map<number, number>();
  #pending = new Set<Promise<void>>();
  #closed = false;

  /**
   * @param backend how to launch, probe and remove containers
   * @param count how many spares to keep per seed
   */
  constructor(backend: SpareBackend, count: number) {
    this.#backend = backend;
    this.#count = count;
  }

  /** How many spares are ready now, all seeds together. */
  get ready(): number {
    let n = 0;
    for (const list of this.#ready.values()) n += list.length;
    return n;
  }

  /**
   * Starts launching spares for a seed, if none are ready or coming.
   *
   * @param seed the seed
   */
  prepare(seed: number): void {
    if (!this.#ready.has(seed)) this.#ready.set(seed, []);
    this.#fill(seed);
  }

  /**
   * Hands out a ready container: a spare when one is alive, else a new one.
   *
   * @param seed the seed
   * @returns a ready container
   */
  async take(seed: number): Promise<Container> {
    const ready = this.#ready.get(seed) ?? [];
    this.#ready.set(seed, ready);
    while (true) {
      const spare = ready.shift();
      this.#fill(seed);
      if (spare === undefined) return await this.#backend.launch(seed);
      try {
        await this.#backend.probe(spare);
        return spare;
      } catch {
        await this.#backend.remove(spare).catch((error) =>
          logFailure("removing a dead spare", error)
        );
      }
    }
  }

  /** The seeds that have spares ready or coming. */
  get seeds(): number[] {
    const seeds = new Set<number>();
    for (const [seed, list] of this.#ready) if (list.length > 0) seeds.add(seed);
    for (const [seed, n] of this.#filling) if (n > 0) seeds.add(seed);
    return [...seeds];
  }

  /**
   * Removes a seed's spares; those still launching are removed when they
   * answer. A later `prepare` or `take` fills the seed again.
   *
   * @param seed the seed
   */
  async retire(seed: number): Promise<void> {
    const ready = this.#ready.get(seed) ?? [];
    this.#ready.delete(seed);
    await Promise.all(
      ready.map((container) =>
        this.#backend.remove(container).catch((error) => logFailure("removing a spare", error))
      ),
    );
  }

  /** Removes every spare and waits for launches under way. */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#pending.size > 0) await Promise.all(this.#pending);
    const all = [...this.#ready.values()].flat();
    this.#ready.clear();
    await Promise.all(all.map((c) => this.#backend.remove(c)));
  }

  #fill(seed: number): void {
    if (this.#closed || this.#count === 0) return;
    const ready = this.#ready.get(seed) ?? [];
    const filling = this.#filling.get(seed) ?? 0;
    if (ready.length + filling >= this.#count) return;
    this.#filling.set(seed, filling + 1);
    let launched = false;
    const launch = this.#backend.launch(seed).then(
      async (container) => {
        // Closed, or the seed retired while this one launched.
        if (this.#closed || this.#ready.get(seed) !== ready) {
          await this.#backend.remove(container);
        } else {
          ready.push(container);
          launched = true;
        }
      },
      (error) => console.warn(`Could not launch a spare: ${String(error)}`),
    ).finally(() => {
      const left = (this.#filling.get(seed) ?? 1) - 1;
      if (left > 0) this.#filling.set(seed, left);
      else this.#filling.delete(seed);
      this.#pending.delete(launch);
      // One launch at a time per seed, until `count` are ready; a failed
      // launch does not chain another (the next take tries again).
      if (launched && this.#ready.get(seed) === ready) this.#fill(seed);
    });
    this.#pending.add(launch);
  }
}
