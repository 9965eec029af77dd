/**
 * `deno task image:apps`: builds the image of a real web application from
 * Debian 12 packages alone and imports it into Incus as `webserv-APP` and into
 * Docker as `webserv-APP:latest` (`--no-incus`, `--no-docker` to skip one).
 *
 * The root filesystem is made by `mmdebstrap` (bookworm, from the Debian
 * mirror apt on this machine uses), with the application, its database and
 * its web server installed by apt inside it; then WebServ's files are copied
 * in: the configuration, an init (pid 1) that starts the database, seeds it
 * at an instance's first start from `WS_SEED`, starts the web server on
 * 127.0.0.1:8080 and then the state server on `/run/ws/state.sock`. The image
 * only speaks TCP: open it with `siteTransport: "tcp"`.
 *
 * The image carries a fingerprint of its inputs (packages, mirror, suite,
 * the files under `fixtures/sites/APP/`, this script, the deno binary): when Incus
 * already has the alias with that fingerprint, nothing is built. The
 * packages themselves are not pinned: a rebuild after the mirror moved gets
 * the newer bookworm point release.
 *
 * Each application's recipe is in its own folder (`fixtures/sites/APP/recipe.ts`),
 * on its entry in the site registry; {@linkcode RECIPES} lists them.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DockerClient } from "../sandboxes/docker/client.ts";
import { IncusClient } from "../sandboxes/incus/client.ts";
import { APPS } from "../fixtures/sites/registry.ts";
import type { AppRecipe } from "../fixtures/sites/kit/app_module.ts";

export type { AppRecipe };

/** The applications `deno task image:apps` knows: every real application in the site registry. */
export const RECIPES: Readonly<Record<string, AppRecipe>> = Object.freeze(
  Object.fromEntries(Object.values(APPS).map((app) => [app.name, app.image])),
);

/** What {@linkcode buildAppImage} did. */
export interface BuiltAppImage {
  /** The Incus alias, and the Docker repository (tag `latest`). */
  alias: string;
  /** The fingerprint of the inputs. */
  fingerprint: string;
  /** False when every daemon asked already had it. */
  built: boolean;
}

/** Options of {@linkcode buildAppImage}. */
export interface BuildAppImageOptions {
  /** The Incus daemon to import into; none when absent. */
  incus?: IncusClient;
  /** The Docker daemon to import into (as `webserv-NAME:latest`); none when absent. */
  docker?: DockerClient;
  /** Reports progress. */
  log?: (message: string) => void;
  /** Builds even when Incus has the image with this fingerprint, and installs the packages anew. */
  force?: boolean;
  /**
   * The Incus alias and Docker repository, for a private copy that another
   * build of the application (from another checkout) does not replace.
   *
   * @default {"webserv-NAME"}
   */
  alias?: string;
  /**
   * Where the installed packages' tarball is kept between builds.
   *
   * @default {"$XDG_CACHE_HOME/webserv/apps" or "~/.cache/webserv/apps"}
   */
  cacheDir?: string;
}

function defaultCacheDir(): string {
  const xdg = Deno.env.get("XDG_CACHE_HOME");
  return join(xdg ?? join(Deno.env.get("HOME") ?? "/root", ".cache"), "webserv", "apps");
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The folder of an application's files. */
function appFolder(recipe: AppRecipe): string {
  return join(ROOT, "fixtures", "sites", recipe.name);
}

/** One apt source: a mirror URI and a suite. */
export interface AptSource {
  /** The mirror, such as `http://deb.debian.org/debian`. */
  uri: string;
  /** `bookworm` or `bookworm-security`. */
  suite: string;
}

/**
 * The bookworm and bookworm-security sources of apt on this machine (deb822
 * files, then the one-line `sources.list`): the image is built from the
 * same mirror, the only place this machine reaches for packages.
 *
 * @returns the sources, main only
 * @throws {Error} when apt has no bookworm source
 */
export async function aptSources(): Promise<AptSource[]> {
  const found: AptSource[] = [];
  const add = (uri: string, suite: string) => {
    if (
      (suite === "bookworm" || suite === "bookworm-security") &&
      !found.some((s) => s.suite === suite)
    ) found.push({ uri, suite });
  };
  let files: string[] = [];
  try {
    files = [...Deno.readDirSync("/etc/apt/sources.list.d")]
      .filter((entry) => entry.name.endsWith(".sources")).map((entry) => entry.name).sort();
  } catch { /* no folder: sources.list only */ }
  for (const file of files) {
    const text = await Deno.readTextFile(join("/etc/apt/sources.list.d", file));
    for (const stanza of text.split(/\n\s*\n/)) {
      const uri = /^URIs:\s*(\S+)/m.exec(stanza)?.[1];
      const suites = /^Suites:\s*(.+)$/m.exec(stanza)?.[1]?.trim().split(/\s+/) ?? [];
      if (uri) { for (const suite of suites) add(uri, suite); }
    }
  }
  try {
    for (const line of (await Deno.readTextFile("/etc/apt/sources.list")).split("\n")) {
      const [type, uri, suite] = line.trim().split(/\s+/);
      if (type === "deb" && uri && suite) add(uri, suite);
    }
  } catch { /* no sources.list */ }
  if (!found.some((s) => s.suite === "bookworm")) {
    throw new Error(
      "Cannot find apt's bookworm mirror in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list: add one",
    );
  }
  return found;
}

async function sha256(parts: (string | Uint8Array)[]): Promise<string> {
  const chunks = parts.map((part) =>
    typeof part === "string" ? new TextEncoder().encode(part) : part
  );
  const joined = new Uint8Array(chunks.reduce((n, c) => n + c.length + 1, 0));
  let at = 0;
  for (const chunk of chunks) {
    joined.set(chunk, at);
    at += chunk.length + 1;
  }
  const digest = await crypto.subtle.digest("SHA-256", joined);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Runs one of the build's tools to the end.
 *
 * @param command the tool
 * @param args its arguments
 * @param what what it does, for the message
 * @throws {Error} when it is not installed, or exits with another code than 0 (its last 20 lines of stderr)
 */
export async function run(command: string, args: string[], what: string): Promise<void> {
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(command, { args, stdout: "null", stderr: "piped" }).output();
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    // The build's tools come from Debian (`.ci/apps.sh` installs them).
    throw new Error(`Cannot ${what}: ${command} is not installed (apt-get install ${command})`);
  }
  const { code, stderr } = output;
  if (code !== 0) {
    const text = new TextDecoder().decode(stderr).trim().split("\n").slice(-20).join("\n");
    throw new Error(`Cannot ${what}: ${command} exited with ${code}:\n${text}`);
  }
}

/** Streams a tar of `entries` under `directory` into `upload`, and checks tar's exit. */
async function importTar(
  directory: string,
  entries: string[],
  upload: (tarball: ReadableStream<Uint8Array>) => Promise<unknown>,
): Promise<void> {
  const tar = new Deno.Command("tar", {
    args: ["-C", directory, "--numeric-owner", "-cf", "-", ...entries],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  await upload(tar.stdout);
  const status = await tar.status;
  if (!status.success) {
    throw new Error(`Cannot import "${directory}": tar exited with ${status.code}`);
  }
}

async function bundle(recipe: AppRecipe, script: string, output: string): Promise<void> {
  const config = join(ROOT, "deno.json");
  const entry = join(appFolder(recipe), script);
  await run(Deno.execPath(), [
    "bundle",
    "--quiet",
    "--platform=deno",
    `--config=${config}`,
    `--output=${output}`,
    entry,
  ], `bundle ${script} of ${recipe.name}`);
}

/**
 * Builds (unless Incus has it) and imports the image of one application.
 *
 * @param recipe the application
 * @param options the Incus daemon
 * @returns the alias, the fingerprint, and whether it was built
 * @throws {Error} when mmdebstrap, apt or the import fails, with their output
 */
export async function buildAppImage(
  recipe: AppRecipe,
  options: BuildAppImageOptions,
): Promise<BuiltAppImage> {
  const log = options.log ?? (() => {});
  const alias = options.alias ?? `webserv-${recipe.name}`;
  const stage = await Deno.makeTempDir({ prefix: `webserv-${recipe.name}-` });
  try {
    const bundles: string[] = [];
    for (const script of recipe.scripts) {
      const output = join(stage, basename(script).replace(/\.ts$/, ".js"));
      await bundle(recipe, script, output);
      bundles.push(output);
    }
    const sources = await aptSources();
    const appDir = appFolder(recipe);
    const inputs: (string | Uint8Array)[] = [
      JSON.stringify({ recipe, sources }),
      await Deno.readFile(fileURLToPath(import.meta.url)),
      ...await Promise.all(bundles.map((file) => Deno.readFile(file))),
      Deno.version.deno,
      String((await Deno.stat(Deno.execPath())).size),
    ];
    for (const file of Object.keys(recipe.files).sort()) {
      inputs.push(file, await Deno.readFile(join(appDir, file)));
    }
    const fingerprint = await sha256(inputs);
    const tag = fingerprint.slice(0, 12);
    const needIncus = options.incus !== undefined && (options.force ||
      (await options.incus.aliasedImageProperties(alias))?.["webserv.fingerprint"] !==
        fingerprint);
    const needDocker = options.docker !== undefined &&
      (options.force || !(await options.docker.hasImage(`${alias}:${tag}`)));
    if (!needIncus && !needDocker) {
      log(`${recipe.name}: "${alias}" is up to date (${tag})`);
      return { alias, fingerprint, built: false };
    }

    const rootfs = join(stage, "rootfs");
    let started = performance.now();
    // The packages alone take minutes: their tarball is kept, keyed by the
    // package list and the mirror, so changing WebServ's files rebuilds in
    // seconds. `--force` makes it again (to take a newer point release).
    const cacheDir = options.cacheDir ?? defaultCacheDir();
    const base = join(
      cacheDir,
      `${recipe.name}-${
        (await sha256([JSON.stringify({
          packages: recipe.packages,
          sources,
          ...(recipe.debconf ? { debconf: recipe.debconf } : {}),
        })]))
          .slice(0, 16)
      }.tar`,
    );
    if (options.force || !(await exists(base))) {
      log(`${recipe.name}: mmdebstrap bookworm from ${sources.map((s) => s.uri).join(", ")}`);
      await Deno.mkdir(cacheDir, { recursive: true });
      await Deno.remove(`${base}.partial`, { recursive: true }).catch(() => {});
      await run("mmdebstrap", [
        "--variant=apt",
        "--mode=root",
        "--quiet",
        "--format=tar",
        `--include=${recipe.packages.join(",")}`,
        ...(recipe.debconf ?? []).map((answer) =>
          `--essential-hook=echo '${answer}' | chroot "$1" debconf-set-selections`
        ),
        "bookworm",
        `${base}.partial`,
        ...sources.map((s) => `deb ${s.uri} ${s.suite} main`),
      ], "build the root filesystem with mmdebstrap");
      await Deno.rename(`${base}.partial`, base);
      log(`${recipe.name}: packages in ${Math.round((performance.now() - started) / 1000)} s`);
    } else {
      log(`${recipe.name}: packages from ${base}`);
    }
    await Deno.mkdir(rootfs);
    await run("tar", ["-C", rootfs, "--numeric-owner", "-xpf", base], `unpack ${base}`);

    started = performance.now();
    for (const [file, { path, mode }] of Object.entries(recipe.files)) {
      const target = join(rootfs, path);
      await Deno.mkdir(dirname(target), { recursive: true });
      await Deno.remove(target).catch(() => {});
      await Deno.copyFile(join(appDir, file), target);
      await Deno.chmod(target, mode);
    }
    for (const file of bundles) {
      await Deno.copyFile(file, join(rootfs, "srv", recipe.name, basename(file)));
    }
    await Deno.copyFile(Deno.execPath(), join(rootfs, "usr/local/bin/deno"));
    await Deno.chmod(join(rootfs, "usr/local/bin/deno"), 0o755);
    for (const command of recipe.commands) {
      const [program = "true", ...args] = command;
      await run("chroot", [rootfs, program, ...args], `configure the image (${command.join(" ")})`);
    }

    await Deno.writeTextFile(
      join(stage, "metadata.yaml"),
      `architecture: x86_64
creation_date: ${Math.floor(Date.now() / 1000)}
properties:
  description: WebServ application ${recipe.name} (Debian 12 packages)
  os: debian
  release: bookworm
  webserv.fingerprint: "${fingerprint}"
`,
    );
    if (options.incus && needIncus) {
      await importTar(
        stage,
        ["metadata.yaml", "rootfs"],
        (tarball) => options.incus!.importImage(tarball, alias),
      );
      log(`${recipe.name}: imported into Incus as "${alias}"`);
    }
    if (options.docker && needDocker) {
      const docker = options.docker;
      await importTar(
        rootfs,
        ["."],
        (tarball) => docker.importImage(tarball, alias, tag, ["/sbin/init"]),
      );
      await docker.tagImage(`${alias}:${tag}`, alias, "latest");
      log(`${recipe.name}: imported into Docker as "${alias}:${tag}" and "${alias}:latest"`);
    }
    log(
      `${recipe.name}: configured and imported in ${
        Math.round((performance.now() - started) / 1000)
      } s`,
    );
    return { alias, fingerprint, built: true };
  } finally {
    await Deno.remove(stage, { recursive: true });
  }
}

if (import.meta.main) {
  const names = Deno.args.filter((a) => !a.startsWith("--"));
  const alias = Deno.args.find((a) => a.startsWith("--alias="))?.slice("--alias=".length);
  if (alias !== undefined && names.length !== 1) {
    console.error("--alias names the image of one application: give exactly one APP");
    Deno.exit(2);
  }
  const force = Deno.args.includes("--force");
  const unknown = names.filter((name) => !Object.hasOwn(RECIPES, name));
  if (unknown.length > 0) {
    console.error(
      `Unknown application ${unknown.join(", ")}: known are ${Object.keys(RECIPES).join(", ")}`,
    );
    console.error(
      "Usage: deno task image:apps [--force] [--no-incus] [--no-docker] [--alias=NAME] [APP...]",
    );
    Deno.exit(2);
  }
  using incus = new IncusClient();
  using docker = new DockerClient();
  for (const name of names.length > 0 ? names : Object.keys(RECIPES)) {
    const recipe = RECIPES[name];
    if (!recipe) continue;
    await buildAppImage(recipe, {
      ...(Deno.args.includes("--no-incus") ? {} : { incus }),
      ...(Deno.args.includes("--no-docker") ? {} : { docker }),
      force,
      ...(alias ? { alias } : {}),
      log: (message) => console.log(message),
    });
  }
}
