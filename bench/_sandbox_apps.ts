/**
 * The real-application rows of `deno task bench:sandbox` (`BENCH_APPS=mediawiki,wordpress,redmine`):
 * the WebServ paper's Table 2 on MediaWiki 1.39 (a 1.5 GiB MariaDB database),
 * WordPress 6.1 and Redmine 5.0, each on Incus copy-on-write (btrfs) and Docker
 * (overlay2), measured side by side in one run. Launches and resets
 * alternate between the backends so that the load of a shared machine falls
 * on both alike; the capacity runs take turns.
 *
 * The images are the ones `deno task image:apps NAME` imports; this never
 * builds them. The seed's base (the Incus base instance, Docker's seed image)
 * is the one the application tests make (prefix `wsapp-`), made here if it
 * is missing and not counted as a launch.
 *
 * @module
 */
import { Gateway } from "../sandboxes/gateway.ts";
import { IncusSandbox } from "../sandboxes/incus/incus_sandbox.ts";
import { DockerSandbox } from "../sandboxes/docker/docker_sandbox.ts";
import type { Instance, Sandbox } from "../sandboxes/types.ts";
import {
  type AppBenchSettings,
  type AppResult,
  earlierRuns,
  writeResults,
} from "./_sandbox_apps_report.ts";
import { sharedBackends } from "./_sandbox_shared.ts";
import {
  command,
  freeDisk,
  loadAverage,
  memAvailable,
  MIB,
  namespaceMemory,
  progress,
  round,
  stats,
} from "./_sandbox_common.ts";

const POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";
const POOL_PATH = `/var/lib/incus/storage-pools/${POOL}`;
const GIB = 2 ** 30;

export type { AppBenchSettings } from "./_sandbox_apps_report.ts";

/** A real application and the write a visitor makes on it. */
export interface AppSpec {
  key: string;
  label: string;
  image: string;
  database: string;
  /** How long an instance (and the base, when it has to seed) may take. */
  readyMs: number;
  /** Whether its image runs the shared-runtime mode (`WS_SHARED=1`), measured beside the containers. */
  sharedRuntime: boolean;
  /** One write through the gateway, as an anonymous visitor makes it; throws unless it took. */
  write(gateway: Gateway, env: Instance, n: number): Promise<void>;
}

/** A backend of envs (a container per env, or the shared runtime). */
export interface AppBackend {
  key: "incus-btrfs" | "docker" | "shared" | "shared-cold";
  label: string;
  open(gateway: Gateway, app: AppSpec): Promise<Sandbox>;
  /** Bytes the env holds of its own, after its first write. */
  storage(sandbox: Sandbox, env: Instance): Promise<number>;
  /** The host pid of the container's init. */
  initPid(sandbox: Sandbox, env: Instance): Promise<number>;
  /**
   * The container's memory use as the backend reports it (cgroup, page cache
   * included); for the shared runtime, the runtime's divided among `envs`.
   */
  cgroupMemory(sandbox: Sandbox, env: Instance, envs: number): Promise<number>;
  /**
   * PSS and RSS of the env's processes, when not every process of its
   * container's pid namespace (the shared runtime: the env's own server plus
   * its share of the runtime among `envs` envs).
   */
  memory?(
    sandbox: Sandbox,
    env: Instance,
    envs: number,
  ): Promise<{ pss: number; rss: number; processes: number; ownPss: number }>;
  /** PSS of everything the backend runs for `envs`, divided among them (the shared runtime). */
  pssPerEnv?(sandbox: Sandbox, envs: Instance[]): Promise<number>;
  /** Bytes free where the next env's storage goes. */
  free(sandbox: Sandbox): Promise<number>;
}

/** The backends an application is measured on. */
function backendsOf(app: AppSpec): AppBackend[] {
  return BACKENDS.filter((b) => app.sharedRuntime || !b.key.startsWith("shared"));
}

const open = new Set<Sandbox>();

/** Set by SIGINT or SIGTERM: the run stops before its next create, write or reset. */
let interrupted = false;

/** Ends the run at its next step once interrupted; its envs are then removed by the finally blocks. */
function stopIfInterrupted(): void {
  if (interrupted) throw new Error("Interrupted by a signal");
}

/** Closes every sandbox this module opened (on a signal, and at the end). */
async function closeAll(): Promise<void> {
  const sandboxes = [...open];
  open.clear();
  for (const sandbox of sandboxes) {
    try {
      await sandbox.close();
    } catch (error) {
      progress(`closing a sandbox failed: ${String(error).slice(0, 300)}`);
    }
  }
}

async function opened(sandbox: Promise<Sandbox>): Promise<Sandbox> {
  const s = await sandbox;
  open.add(s);
  return s;
}

async function closed(sandbox: Sandbox): Promise<void> {
  open.delete(sandbox);
  await sandbox.close();
}

function containerName(env: Instance): string {
  return "containerName" in env && typeof env.containerName === "string" ? env.containerName : "";
}

async function expectStatus(response: Response, status: number, what: string): Promise<string> {
  const body = await response.text();
  if (response.status !== status) {
    throw new Error(`${what} answered ${response.status}: ${body.slice(0, 300)}`);
  }
  return body;
}

let wordpressPost: number | undefined;

const APPS: AppSpec[] = [
  {
    key: "mediawiki",
    label: "MediaWiki 1.39",
    image: "webserv-mediawiki",
    database: "MariaDB, 1,511 MiB after the build",
    readyMs: 300_000,
    sharedRuntime: true,
    async write(gateway, env, n) {
      // An anonymous edit through the API, whose edit token for anonymous users is "+\".
      const response = await gateway.request(env.origin, "/api.php", {
        method: "POST",
        body: new URLSearchParams({
          action: "edit",
          format: "json",
          title: `Bench edit ${n}`,
          appendtext: `A sentence from the sandbox benchmark, ${crypto.randomUUID()}.`,
          summary: "sandbox benchmark",
          token: "+\\",
        }),
      });
      const body = await expectStatus(response, 200, "MediaWiki's edit");
      if (!body.includes('"result":"Success"')) {
        throw new Error(`MediaWiki did not take the edit: ${body.slice(0, 300)}`);
      }
    },
  },
  {
    key: "wordpress",
    label: "WordPress 6.1",
    image: "webserv-wordpress",
    database: "MariaDB, seeded posts, pages and comments",
    readyMs: 180_000,
    sharedRuntime: true,
    async write(gateway, env) {
      // The newest post's id is the same in every env of the seed: read once,
      // over the state channel, outside the timed write when it is warm.
      let post = wordpressPost;
      if (post === undefined) {
        const response = await env.state?.fetch("/query/posts?status=publish&limit=1");
        if (!response) throw new Error("the WordPress env has no state channel");
        const body = JSON.parse(await expectStatus(response, 200, "WordPress's state")) as {
          result: { id: number }[];
        };
        post = body.result[0]?.id;
        if (post === undefined) throw new Error("WordPress has no published post");
        wordpressPost = post;
      }
      const response = await gateway.request(env.origin, "/wp-comments-post.php", {
        method: "POST",
        body: new URLSearchParams({
          comment_post_ID: String(post),
          author: "Bench Reader",
          email: "reader@webserv.test",
          url: "",
          comment: `A comment from the sandbox benchmark ${crypto.randomUUID()}`,
        }),
      });
      await expectStatus(response, 302, "WordPress's comment form");
    },
  },
  {
    key: "redmine",
    label: "Redmine 5.0",
    image: "webserv-redmine",
    database: "MariaDB, 18 MiB after seed 1",
    readyMs: 300_000,
    // Redmine's shared runtime (Passenger's Rails) is not built.
    sharedRuntime: false,
    write: redmineNote,
  },
];

/**
 * Redmine's write as a browser makes it: anonymous visitors may not write, so
 * the seed's administrator signs in through the login form and adds a note
 * to issue 1 through its edit form, each POST with the page's CSRF token and
 * the session cookie. The write is checked by its redirect back to the issue
 * (a refused token answers 422, a rejected note renders the form with 200).
 */
async function redmineNote(gateway: Gateway, env: Instance, n: number): Promise<void> {
  const cookies = new Map<string, string>();
  const send = async (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (cookies.size) {
      headers.set("cookie", [...cookies].map(([name, value]) => `${name}=${value}`).join("; "));
    }
    const response = await gateway.request(env.origin, path, { ...init, headers });
    for (const cookie of response.headers.getSetCookie()) {
      const pair = cookie.split(";", 1)[0] ?? "";
      const at = pair.indexOf("=");
      if (at > 0) cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return response;
  };
  const csrf = (html: string, what: string) => {
    const token = html.match(/<meta name="csrf-token" content="([^"]+)"/)?.[1];
    if (!token) throw new Error(`${what} has no CSRF token`);
    return token;
  };
  const form = (fields: Record<string, string>) => ({
    method: "POST",
    body: new URLSearchParams(fields),
  });
  const login = await expectStatus(await send("/login"), 200, "Redmine's login page");
  const signedIn = await send(
    "/login",
    form({
      authenticity_token: csrf(login, "Redmine's login page"),
      username: "admin",
      password: "webserv-admin",
    }),
  );
  await expectStatus(signedIn, 302, "Redmine's login form");
  if ((signedIn.headers.get("location") ?? "").includes("/login")) {
    throw new Error("Redmine refused the administrator's login");
  }
  const issue = await expectStatus(await send("/issues/1"), 200, "Redmine's issue 1");
  const noted = await send(
    "/issues/1",
    form({
      _method: "patch",
      authenticity_token: csrf(issue, "Redmine's issue 1"),
      "issue[notes]": `A note from the sandbox benchmark, ${n}: ${crypto.randomUUID()}`,
    }),
  );
  await expectStatus(noted, 302, "Redmine's issue form");
  if (!/\/issues\/1(\?|#|$)/.test(noted.headers.get("location") ?? "")) {
    throw new Error(`Redmine sent the note elsewhere: ${noted.headers.get("location")}`);
  }
}

const BACKENDS: AppBackend[] = [
  {
    key: "incus-btrfs",
    label: "Incus, copy-on-write (btrfs)",
    open: (gateway, app) =>
      IncusSandbox.open({
        gateway,
        image: app.image,
        pool: POOL,
        prefix: "wsapp-",
        siteTransport: "tcp",
        readyTimeoutMs: app.readyMs,
      }),
    async storage(_sandbox, env) {
      // Bytes of the env's subvolume that share no extent with its base or
      // anything else: what the env added. The pool is shared with other
      // work, so its growth would count theirs too.
      await command("sync", []);
      const out = await command("btrfs", [
        "filesystem",
        "du",
        "-s",
        "--raw",
        `${POOL_PATH}/containers/${containerName(env)}`,
      ]);
      const fields = out.trim().split("\n").at(-1)?.trim().split(/\s+/) ?? [];
      return Number(fields[1] ?? NaN);
    },
    async initPid(sandbox, env) {
      return (await (sandbox as IncusSandbox).client.instanceState(containerName(env))).pid;
    },
    async cgroupMemory(sandbox, env) {
      return (await (sandbox as IncusSandbox).client.instanceState(containerName(env)))
        .memoryUsage;
    },
    async free(sandbox) {
      const space = await (sandbox as IncusSandbox).client.poolSpace(POOL);
      return space.total - space.used;
    },
  },
  {
    key: "docker",
    label: "Docker (overlay2)",
    open: (gateway, app) =>
      DockerSandbox.open({
        gateway,
        image: app.image,
        prefix: "wsapp-",
        readyTimeoutMs: app.readyMs,
      }),
    async storage(sandbox, env) {
      const docker = (sandbox as DockerSandbox).client;
      const containers = await docker.listContainers({ label: "webserv.owner", size: true });
      const name = containerName(env);
      const found = containers.find((c) => c.names.some((n) => n.replace(/^\//, "") === name));
      if (!found) throw new Error(`Docker does not list the container "${name}"`);
      return found.sizeRw;
    },
    async initPid(sandbox, env) {
      return (await (sandbox as DockerSandbox).client.inspectContainer(containerName(env))).pid;
    },
    async cgroupMemory(sandbox, env) {
      return await (sandbox as DockerSandbox).client.memoryUsage(containerName(env));
    },
    free: () => freeDisk("/var/lib/docker"),
  },
  ...sharedBackends(POOL, POOL_PATH),
];

interface Side {
  backend: AppBackend;
  sandbox: Sandbox;
  ready: number[];
  written: number[];
  writes: number[];
  resets: number[];
  envs: Instance[];
  /** What failed: a launch or a write that did not take, a reset that threw. */
  failures: string[];
}

function failed(side: Side, app: AppSpec, what: string, error: unknown): void {
  const message = `${what}: ${String(error).replace(/\s+/g, " ").slice(0, 240)}`;
  side.failures.push(message);
  progress(`${app.label} on ${side.backend.label}: FAILED ${message}`);
}

let writes = 0;

async function launch(side: Side, app: AppSpec, gateway: Gateway): Promise<void> {
  stopIfInterrupted();
  const start = performance.now();
  let env: Instance;
  try {
    env = await side.sandbox.create({ seed: 1 });
  } catch (error) {
    failed(side, app, "create", error);
    return;
  }
  const ready = performance.now();
  try {
    await app.write(gateway, env, ++writes);
  } catch (error) {
    // Not a sample: the env answered its readiness check but not the write.
    failed(side, app, `first write ${round(performance.now() - ready)} ms after ready`, error);
    return;
  }
  const done = performance.now();
  side.envs.push(env);
  side.ready.push(ready - start);
  side.written.push(done - start);
  side.writes.push(done - ready);
  progress(
    `${app.label} on ${side.backend.label}: launch ${side.ready.length} ready ${
      round(ready - start)
    } ms, first write ${round(done - ready)} ms${
      "source" in env ? ` (server: ${String(env.source)})` : ""
    }`,
  );
}

async function capacity(
  app: AppSpec,
  backend: AppBackend,
  gateway: Gateway,
  settings: AppBenchSettings,
  perEnv: { storage: number; memory: number },
): Promise<AppResult["capacity"]> {
  const sandbox = await opened(backend.open(gateway, app));
  const held: Instance[] = [];
  let stoppedBecause = `reached the cap of ${settings.cap}`;
  const start = performance.now();
  try {
    // The next env must fit with a margin: twice what one took in the launches.
    const floor = backend.key === "docker" ? settings.minFreeDisk : settings.minFreePool;
    while (held.length < settings.cap) {
      stopIfInterrupted();
      const free = await backend.free(sandbox);
      if (free - 2 * perEnv.storage < floor) {
        stoppedBecause = `the next env would leave under ${round(floor / GIB, 1)} GiB free ${
          backend.key === "docker" ? "on the host's disk" : `in the ${POOL} pool`
        } (${round(free / GIB, 2)} GiB free)`;
        break;
      }
      if (backend.key !== "docker" && await freeDisk("/var/lib") < settings.minFreeDisk) {
        stoppedBecause = `the host's free disk fell under ${settings.minFreeDisk / GIB} GiB`;
        break;
      }
      if (memAvailable() - 2 * perEnv.memory < settings.minFreeMemory) {
        stoppedBecause = `the next env would leave under ${
          settings.minFreeMemory / GIB
        } GiB of available memory`;
        break;
      }
      try {
        const env = await sandbox.create({ seed: 1 });
        held.push(env);
        await app.write(gateway, env, ++writes);
      } catch (error) {
        stoppedBecause = `a create or its first write failed: ${String(error).slice(0, 200)}`;
        break;
      }
      progress(
        `${app.label} on ${backend.label}: ${held.length} envs ready, ${
          round(free / GIB, 2)
        } GiB free for storage, ${round(memAvailable() / GIB, 1)} GiB memory available`,
      );
    }
    // Every env must still answer for the count to stand.
    let answering = 0;
    for (const env of held) {
      try {
        await env.check();
        answering++;
      } catch {
        // counted as not ready
      }
    }
    progress(
      `${app.label} on ${backend.label}: ${answering} envs ready at once (${stoppedBecause})`,
    );
    const pss = backend.pssPerEnv && held.length
      ? round(await backend.pssPerEnv(sandbox, held) / MIB)
      : undefined;
    return {
      ready: answering,
      stoppedBecause,
      seconds: round((performance.now() - start) / 1000),
      ...(pss === undefined ? {} : { pssPerEnvMiB: pss }),
    };
  } finally {
    await closed(sandbox);
  }
}

async function benchApp(app: AppSpec, settings: AppBenchSettings): Promise<AppResult[]> {
  await using gateway = new Gateway();
  const sides: Side[] = [];
  try {
    for (const backend of backendsOf(app)) {
      progress(`${app.label} on ${backend.label}: opening; a first env warms the seed's base`);
      const sandbox = await opened(backend.open(gateway, app));
      // Not a sample: makes the seed's base if missing and warms the caches.
      const warm = await sandbox.create({ seed: 1 });
      await app.write(gateway, warm, ++writes);
      await warm.destroy();
      sides.push({
        backend,
        sandbox,
        ready: [],
        written: [],
        writes: [],
        resets: [],
        envs: [],
        failures: [],
      });
    }
    // Alternating, each round in the other order, so that load hits both alike.
    for (let i = 0; i < settings.launches; i++) {
      for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
        await launch(side, app, gateway);
      }
    }
    const measured = new Map<string, Omit<AppResult, "capacity">>();
    for (const side of sides) {
      const storage: number[] = [];
      const pss: number[] = [];
      const ownPss: number[] = [];
      const rss: number[] = [];
      const cgroup: number[] = [];
      let processes = 0;
      for (const env of side.envs) {
        storage.push(await side.backend.storage(side.sandbox, env));
        let memory: { pss: number; rss: number; processes: number };
        if (side.backend.memory) {
          const measured = await side.backend.memory(side.sandbox, env, side.envs.length);
          ownPss.push(measured.ownPss);
          memory = measured;
        } else {
          memory = namespaceMemory(await side.backend.initPid(side.sandbox, env));
        }
        pss.push(memory.pss);
        rss.push(memory.rss);
        processes = memory.processes;
        cgroup.push(await side.backend.cgroupMemory(side.sandbox, env, side.envs.length));
      }
      const mib = (xs: number[]) => stats(xs.map((x) => x / MIB));
      measured.set(side.backend.key, {
        app: app.key,
        backend: side.backend.key,
        label: `${app.label} on ${side.backend.label}`,
        launchReadyMs: stats(side.ready),
        launchFirstWriteMs: stats(side.written),
        firstWriteMs: stats(side.writes),
        storagePerEnvMiB: mib(storage),
        pssPerEnvMiB: mib(pss),
        ...(ownPss.length ? { ownPssPerEnvMiB: mib(ownPss) } : {}),
        rssPerEnvMiB: mib(rss),
        cgroupPerEnvMiB: mib(cgroup),
        processesPerEnv: processes,
        resetMs: stats([]),
        failures: [],
      });
      progress(
        `${app.label} on ${side.backend.label}: storage per env p50 ${
          round(stats(storage).p50 / MIB)
        } MiB, PSS p50 ${round(stats(pss).p50 / MIB)} MiB, cgroup p50 ${
          round(stats(cgroup).p50 / MIB)
        } MiB, ${processes} processes`,
      );
    }
    // Resets of one env per backend, each after a write so there is something to undo.
    for (let i = 0; i < settings.resets; i++) {
      stopIfInterrupted();
      for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
        const env = side.envs[0];
        if (!env) continue;
        // The launch's write is still there before the first reset; later
        // ones follow a reset (WordPress refuses a second comment from one
        // address within 15 s, and the reset is what forgets the first).
        try {
          if (i > 0) await app.write(gateway, env, ++writes);
          const start = performance.now();
          await env.reset();
          side.resets.push(performance.now() - start);
        } catch (error) {
          failed(side, app, `reset round ${i + 1}`, error);
          continue;
        }
        progress(
          `${app.label} on ${side.backend.label}: reset ${side.resets.length} ${
            round(side.resets.at(-1) ?? 0)
          } ms`,
        );
      }
    }
    // The reset env takes a write again: reset gave a working env.
    for (const side of sides) {
      const env = side.envs[0];
      if (env) {
        await app.write(gateway, env, ++writes).catch((error) =>
          failed(side, app, "the write after the resets", error)
        );
      }
      const row = measured.get(side.backend.key);
      if (row) {
        row.resetMs = stats(side.resets);
        row.failures = side.failures;
      }
    }
    const results: AppResult[] = [];
    for (const side of sides) {
      progress(`${app.label} on ${side.backend.label}: destroying the launch samples`);
      await closed(side.sandbox);
    }
    sides.length = 0;
    for (const backend of backendsOf(app)) {
      const row = measured.get(backend.key);
      if (!row) continue;
      const capacityRun = await capacity(app, backend, gateway, settings, {
        storage: row.storagePerEnvMiB.p50 * MIB,
        memory: row.cgroupPerEnvMiB.p50 * MIB,
      });
      results.push({ ...row, capacity: capacityRun });
    }
    return results;
  } finally {
    await closeAll();
  }
}

/**
 * Runs the real-application rows and writes `bench/results/sandbox_apps.{md,json}`.
 *
 * @param keys the applications (`mediawiki`, `wordpress`, `redmine`)
 * @param settings counts and floors
 */
export async function benchApps(keys: string[], settings: AppBenchSettings): Promise<void> {
  const unknown = keys.filter((key) => !APPS.some((app) => app.key === key));
  if (unknown.length) {
    throw new Error(
      `BENCH_APPS names no application "${unknown.join(", ")}"; known: ${
        APPS.map((a) => a.key).join(", ")
      }`,
    );
  }
  // A signal ends the run at its next step rather than closing the sandboxes
  // under it: a create in flight would then make an env that nothing removes.
  const stop = () => {
    progress("interrupted: stopping after the current step, then removing every env this run made");
    interrupted = true;
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  const loadBefore = loadAverage();
  // The report keeps the rows of applications this run does not measure.
  const earlier = await earlierRuns(keys);
  const startedAt = new Date().toISOString();
  const results: AppResult[] = [];
  try {
    for (const app of APPS.filter((a) => keys.includes(a.key))) {
      results.push(...await benchApp(app, settings));
      await writeResults(results, { startedAt, loadBefore, settings, apps: keys }, earlier);
    }
  } catch (error) {
    if (!interrupted) throw error;
  } finally {
    Deno.removeSignalListener("SIGINT", stop);
    Deno.removeSignalListener("SIGTERM", stop);
    await closeAll();
  }
  if (interrupted) {
    progress("interrupted: every env this run made is removed");
    Deno.exit(130);
  }
  console.log(
    await writeResults(results, { startedAt, loadBefore, settings, apps: keys }, earlier),
  );
}
