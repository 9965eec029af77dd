/**
 * A warm pool: keeps instances created ahead of need, so handing one out
 * costs a health check instead of a launch. Works over any backend.
 *
 * Invariant: `idle.length + filling <= size`; every idle instance answered
 * when it was created, and is checked again when handed out, so one killed
 * from outside meanwhile is destroyed and replaced, never handed out.
 *
 * @module
 */
import { InstanceGoneError } from "./errors.ts";
import type { Instance, InstanceSpec } from "./types.ts";

/** Options of {@linkcode WarmPool}. */
export interface WarmPoolOptions {
  /** How many instances to keep ready. */
  size: number;
  /**
   * What every pooled instance runs.
   *
   * @default {{}}
   */
  spec?: InstanceSpec;
  /**
   * How many instances to create at once while filling.
   *
   * @default {2}
   */
  concurrency?: number;
}

/** What a pool needs of a backend. */
export interface InstanceFactory<I extends Instance> {
  /**
   * Creates a ready instance.
   *
   * @param spec what to run
   * @returns the instance
   */
  create(spec?: InstanceSpec): Promise<I>;
}

/**
 * Keeps `size` instances of one spec ready.
 *
 * @example Keep two envs ready
 * ```ts ignore
 * import { type Sandbox, WarmPool } from "@webserv/webserv/sandboxes";
 * declare const sandbox: Sandbox;
 * await using pool = new WarmPool(sandbox, { size: 2, spec: { seed: 1 } });
 * await pool.filled();
 * const env = await pool.acquire(); // already answering
 * ```
 */
export class WarmPool<I extends Instance> implements AsyncDisposable {
  #factory: InstanceFactory<I>;
  #size: number;
  #spec: InstanceSpec;
  #concurrency: number;
  #idle: I[] = [];
  #filling = 0;
  #closed = false;
  #replaced = 0;
  #waiters: (() => void)[] = [];
  #lastError: unknown;

  /**
   * Starts filling at once.
   *
   * @param factory the backend
   * @param options the size and the spec
   * @throws {RangeError} when `size` is negative
   */
  constructor(factory: InstanceFactory<I>, options: WarmPoolOptions) {
    if (options.size < 0) {
      throw new RangeError(
        `Cannot keep ${options.size} instances ready: the size must be at least 0`,
      );
    }
    this.#factory = factory;
    this.#size = options.size;
    this.#spec = options.spec ?? {};
    this.#concurrency = options.concurrency ?? 2;
    this.#fill();
  }

  /** The instances ready to hand out. */
  get idle(): readonly I[] {
    return this.#idle;
  }

  /** How many dead instances were found and replaced. */
  get replaced(): number {
    return this.#replaced;
  }

  /**
   * Waits until the pool holds `size` ready instances.
   *
   * @throws {Error} the last creation error, when filling keeps failing
   */
  async filled(): Promise<void> {
    while (this.#idle.length < this.#size && !this.#closed) {
      if (this.#filling === 0 && this.#lastError !== undefined) {
        throw this.#lastError;
      }
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /**
   * Hands out a ready instance, checked just now; creates one when the pool
   * is empty. The pool refills in the background.
   *
   * @returns an instance that answers; the caller destroys it
   */
  async acquire(): Promise<I> {
    while (true) {
      const instance = this.#idle.shift();
      this.#fill();
      if (instance === undefined) return await this.#factory.create(this.#spec);
      try {
        await instance.check();
        return instance;
      } catch (error) {
        if (!(error instanceof InstanceGoneError)) throw error;
        this.#replaced++;
        await instance.destroy().catch((cause) =>
          console.warn(`Could not destroy a dead instance: ${String(cause)}`)
        );
      }
    }
  }

  /** Destroys the idle instances and stops filling. */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#filling > 0) {
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    await Promise.all(this.#idle.splice(0).map((i) => i.destroy()));
    this.#wake();
  }

  /** Calls {@linkcode WarmPool.close}. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #fill(): void {
    while (
      !this.#closed && this.#filling < this.#concurrency &&
      this.#idle.length + this.#filling < this.#size
    ) {
      this.#filling++;
      this.#factory.create(this.#spec).then(
        async (instance) => {
          if (this.#closed) await instance.destroy();
          else this.#idle.push(instance);
          this.#lastError = undefined;
        },
        (error) => {
          this.#lastError = error;
          console.warn(`Could not fill the warm pool: ${String(error)}`);
        },
      ).finally(() => {
        this.#filling--;
        if (this.#lastError === undefined) this.#fill();
        this.#wake();
      });
    }
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}
