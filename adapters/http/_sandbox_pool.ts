/**
 * The server's open sandboxes: one per site and placement target, opened
 * through the chosen backend when a session first needs it and shared by
 * that site's sessions; the seeds they hold (`_seeds.ts`); the Incus clients
 * of placement and of each target's sandbox; and a cap on targets.
 *
 * @module
 */
import { logFailure } from "../../engine/log.ts";
import type { Gateway, Sandbox, Site } from "../../sandboxes/mod.ts";
import { IncusClient } from "../../sandboxes/incus/mod.ts";
import type { KitWorkers } from "../../fixtures/sites/kit/mod.ts";
import { type OpenableBackend, quoted } from "./backends.ts";
import type { Catalog } from "./catalog.ts";
import { HttpError } from "./http_error.ts";
import type { Metrics } from "./metrics.ts";
import { onlineMember } from "./_placement.ts";
import { retireSeed, SeedBook, type SeedBookOptions, seededSandbox } from "./_seeds.ts";

/** What the pool opens sandboxes with. */
export interface SandboxPoolOptions {
  /** The backend, its options parsed. */
  backend: OpenableBackend;
  /** The gateway every instance is reached through. */
  gateway: Gateway;
  /** Seeding off the event loop. */
  workers: KitWorkers;
  /** The seed cap and grace period. */
  seeds: SeedBookOptions;
  /**
   * The cap on placement targets with a sandbox of their own.
   *
   * @default {64}
   */
  maxTargets?: number;
  /** The Incus daemon's socket placement asks about members on. */
  incusSocket?: string;
}

/** The sandboxes of every site and target, opened once and shared. */
export class SandboxPool {
  #options: SandboxPoolOptions;
  #sandboxes = new Map<string, Promise<Sandbox>>();
  // The same, once open: read by the metrics.
  #opened = new Map<string, Sandbox>();
  // Incus clients of the sandboxes and of placement, closed after the sandboxes.
  #incusClients: IncusClient[] = [];
  // The clients each placement target's sandbox was opened with, closed with it.
  #targetClients = new Map<string, IncusClient[]>();
  #placer: IncusClient | undefined;
  #seeds: SeedBook;

  /** @param options the backend, gateway, seeds and caps */
  constructor(options: SandboxPoolOptions) {
    this.#options = options;
    this.#seeds = new SeedBook(options.seeds);
  }

  /**
   * A session's sandbox: its instances hold their seed until destroyed.
   *
   * @param site the site
   * @param asked the placement target the session names, if any
   * @returns the sandbox
   * @throws {HttpError} 429 past the target cap; the backend's refusals
   */
  async forSession(site: Site, asked?: string): Promise<Sandbox> {
    const [key, sandbox] = await this.#keyed(site, asked);
    return seededSandbox(sandbox, key, this.#seeds);
  }

  /**
   * Opens a site's sandbox and starts filling one seed's spares (`site/seed`).
   *
   * @param entry the site and seed, such as `wordpress/3`
   * @param catalog the sites the backend serves
   * @throws {RangeError} for an entry that names no site of the catalog
   */
  async warm(entry: string, catalog: Catalog): Promise<void> {
    const [name = "", seedText = ""] = entry.split("/");
    const site = catalog.sites.get(name);
    const seed = Number(seedText);
    if (!site || seedText === "" || !Number.isInteger(seed) || seed < 0) {
      throw new RangeError(
        `Cannot warm "${entry}": expected SITE/SEED with a site the ${this.#options.backend.definition.name} backend serves (${
          quoted([...catalog.sites.keys()])
        }), such as "wordpress/3"`,
      );
    }
    const [key, sandbox] = await this.#keyed(site);
    await this.#seeds.pin(`${key}/${seed}`, () => retireSeed(sandbox, seed));
    if ("warm" in sandbox && typeof sandbox.warm === "function") sandbox.warm(seed);
  }

  /** How many spare containers are ready now, every site together. */
  async readySpares(): Promise<number> {
    let ready = 0;
    for (const opening of this.#sandboxes.values()) {
      const sandbox = await opening.catch(() => undefined);
      if (sandbox && "readySpares" in sandbox && typeof sandbox.readySpares === "number") {
        ready += sandbox.readySpares;
      }
    }
    return ready;
  }

  /**
   * Reports the seeds, targets and held state on the metrics.
   *
   * @param metrics the counters
   */
  measure(metrics: Metrics): void {
    metrics.gauge(
      "webserv_seeds",
      "Seeds held now (busy, idle in their grace, warmed).",
      () => this.#seeds.held,
    );
    metrics.gauge(
      "webserv_seeds_retired_total",
      "Seeds whose state was retired.",
      () => this.#seeds.retired,
      "counter",
    );
    metrics.gauge(
      "webserv_target_sandboxes",
      "Placement targets with a backend of their own.",
      () => this.#targetClients.size,
    );
    metrics.gauge("webserv_seed_state", "Seeds whose state the sandboxes hold now.", () => {
      let held = 0;
      for (const sandbox of this.#opened.values()) held += sandbox.seedsHeld ?? 0;
      return held;
    });
  }

  /** Stops retiring seeds (the sandboxes close after the sessions). */
  closeSeeds(): void {
    this.#seeds.close();
  }

  /** Closes every sandbox, then the Incus clients; failures are logged. */
  async close(): Promise<void> {
    for (const sandbox of this.#sandboxes.values()) {
      await sandbox.then((s) => s.close()).catch((error) => logFailure("close a sandbox", error));
    }
    this.closeClients();
  }

  /** Closes the Incus clients (when the server fails to start, before any sandbox). */
  closeClients(): void {
    for (const client of this.#incusClients) client.close();
  }

  #incus(): IncusClient {
    if (!this.#placer) {
      const socket = this.#options.incusSocket;
      this.#placer = new IncusClient(socket ? { socket } : {});
      this.#incusClients.push(this.#placer);
    }
    return this.#placer;
  }

  async #keyed(site: Site, asked?: string): Promise<[string, Sandbox]> {
    // A lost member's sessions go to an online one (a reset recovers them).
    const target = asked === undefined ? undefined : await onlineMember(this.#incus(), asked);
    // One backend per site and placement target, shared by its sessions.
    const key = target === undefined ? site.name : `${site.name}@${target}`;
    let sandbox = this.#sandboxes.get(key);
    if (!sandbox && target !== undefined) {
      await this.#makeRoomForTarget();
      sandbox = this.#sandboxes.get(key);
    }
    if (!sandbox) sandbox = this.#open(site, key, target);
    const open = await sandbox;
    if (this.#sandboxes.get(key) === sandbox) this.#opened.set(key, open);
    return [key, open];
  }

  #open(site: Site, key: string, target: string | undefined): Promise<Sandbox> {
    const clients: IncusClient[] = [];
    if (target !== undefined) this.#targetClients.set(key, clients);
    const { gateway, workers } = this.#options;
    let opening: Promise<Sandbox>;
    try {
      opening = this.#options.backend.open(site, { gateway, target, clients, workers });
    } catch (error) {
      opening = Promise.reject(error);
    }
    // Its clients were made before its first wait.
    this.#incusClients.push(...clients);
    this.#sandboxes.set(key, opening);
    opening.catch(() => {
      if (this.#sandboxes.get(key) !== opening) return;
      this.#sandboxes.delete(key);
      this.#targetClients.delete(key);
    });
    return opening;
  }

  // Closes the sandbox of a placement target with no live session when the targets fill the cap.
  async #makeRoomForTarget(): Promise<void> {
    const keys = [...this.#targetClients.keys()];
    if (keys.length < (this.#options.maxTargets ?? 64)) return;
    const idle = keys.find((key) => !this.#seeds.busy(key));
    if (idle === undefined) {
      throw new HttpError(
        429,
        "too-many-targets",
        `Cannot place on another target: ${keys.length} placement targets have live sessions`,
        { "Retry-After": "5" },
      );
    }
    const pending = this.#sandboxes.get(idle);
    const clients = this.#targetClients.get(idle) ?? [];
    this.#sandboxes.delete(idle);
    this.#opened.delete(idle);
    this.#targetClients.delete(idle);
    this.#seeds.forget(idle);
    await pending?.then((s) => s.close()).catch((error) =>
      logFailure("close a target's sandbox", error)
    );
    for (const client of clients) {
      client.close();
      const at = this.#incusClients.indexOf(client);
      if (at >= 0) this.#incusClients.splice(at, 1);
    }
  }
}
