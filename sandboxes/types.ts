/**
 * The contract every sandbox backend implements: a {@linkcode Sandbox}
 * creates {@linkcode Instance}s of one site, each reachable at its own origin
 * through the gateway.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { SpareRoute } from "./gateway.ts";

/** A request handler, such as a Hono app's `fetch`. */
export type SiteHandler = (request: Request) => Response | Promise<Response>;

/**
 * A recreated website as the sandboxes run it: code that seeds a SQLite
 * database, a public app over that database, and a privileged state app.
 *
 * The fixture backend is handed a `Site`; the Incus and Docker images run the
 * same module inside the container.
 */
export interface Site {
  /** Short lowercase name, used in image and instance names. */
  readonly name: string;
  /**
   * Fills an empty database with the data drawn from `seed`.
   *
   * @param db an empty database
   * @param seed the seed that decides the data
   */
  seed(db: DatabaseSync, seed: number): void;
  /**
   * Builds the public site over a seeded database.
   *
   * @param db the instance's database
   * @returns the handler the gateway routes the browser to
   */
  app(db: DatabaseSync): SiteHandler;
  /**
   * Builds the privileged state API over the same database, for verifiers.
   *
   * @param db the instance's database
   * @returns the handler behind {@linkcode Instance.state}
   */
  state(db: DatabaseSync): SiteHandler;
}

/** What to run in a new instance. */
export interface InstanceSpec {
  /**
   * The seed for the site's data.
   *
   * @default {0}
   */
  seed?: number;
}

/** Options of {@linkcode Instance.fork}. */
export interface InstanceForkOptions {
  /**
   * A spare origin reserved by the instance's `spares`: the copy serves
   * there. A backend that cannot place a copy on a given origin ignores it
   * (the copy's `origin` then says where it serves).
   *
   * @default {a new origin}
   */
  origin?: string;
}

/** Privileged access to an instance's internal state, for verifiers. */
export interface StateClient {
  /**
   * Sends a request to the site's state API (never routed by the gateway).
   *
   * @param path the path and query, starting with `/`
   * @param init the request options
   * @returns the state API's response
   */
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

/** One running copy of a site, with its own origin and state. */
export interface Instance extends AsyncDisposable {
  /** The instance's id, unique within its gateway (`env-<id>`). */
  readonly id: string;
  /** The origin the browser opens, such as `http://env-ab12.localhost:8800`. */
  readonly origin: string;
  /** Privileged access to the instance's state. */
  readonly state?: StateClient;
  /**
   * Brings the site back to its seeded state.
   *
   * @throws {InstanceGoneError} when the instance died or was removed
   */
  reset(): Promise<void>;
  /**
   * Checks that the instance still runs and answers.
   *
   * @throws {InstanceGoneError} when it does not
   */
  check(): Promise<void>;
  /**
   * Makes a new instance on a copy of this one's live state (database and
   * files), taken consistently at the call; its reset returns to the same
   * seeded state as this one's. Writes to either never reach the other.
   * Optional: a backend that cannot copy a running instance has none.
   *
   * @param options where the copy serves (a spare origin of `spares`)
   * @returns the copy, already serving at its own origin
   * @throws {InstanceGoneError} when this instance died or was removed
   * @throws {RangeError} when `options.origin` is not a spare origin of the instance's gateway
   */
  fork?(options?: InstanceForkOptions): Promise<Instance>;
  /**
   * Reserves origins for copies not made yet (the gateway's spare routes),
   * which `fork({ origin })` then serves on: a browser context that may
   * reach only that origin can be made before the copy. Present on backends
   * whose `fork` takes an origin.
   */
  readonly spares?: { reserve(): SpareRoute };
  /** Stops the instance and removes everything it left; safe to call twice. */
  destroy(): Promise<void>;
}

/** A backend that creates instances of one site. */
export interface Sandbox extends AsyncDisposable {
  /** The backend's kind, such as `"fixture"`, `"incus"` or `"docker"`. */
  readonly kind: string;
  /**
   * Creates an instance and waits until it answers.
   *
   * @param spec what to run
   * @returns the ready instance
   */
  create(spec?: InstanceSpec): Promise<Instance>;
  /**
   * Lets go of what a seed holds between its instances (a seeded template,
   * a base, spares, a runtime), once no instance of it lives; a later
   * `create()` on the seed makes them again. Optional: a backend that keeps
   * nothing per seed has none.
   *
   * @param seed the seed
   */
  retire?(seed: number): Promise<void>;
  /** How many seeds hold state now (what `retire` lets go of); optional as `retire`. */
  readonly seedsHeld?: number;
  /** Destroys every instance this sandbox created and still holds. */
  close(): Promise<void>;
}
