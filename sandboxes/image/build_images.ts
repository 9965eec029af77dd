/**
 * `deno task image`: builds the root filesystem of each site module given on
 * the command line and imports it into Incus (alias `webserv-NAME`) and
 * Docker (`webserv-NAME:latest`), over their APIs. An image whose contents
 * did not change is not imported again.
 *
 * @module
 */
import { join } from "node:path";
import { DockerClient } from "../docker/client.ts";
import { IncusClient } from "../incus/client.ts";
import type { Site } from "../types.ts";
import { buildRootfs } from "./build_rootfs.ts";

/** Options of {@linkcode buildImages}. */
export interface BuildImagesOptions {
  /** The Incus daemon to import into; none when absent. */
  incus?: IncusClient;
  /** The Docker daemon to import into; none when absent. */
  docker?: DockerClient;
  /** Reports progress. */
  log?: (message: string) => void;
}

/** What {@linkcode buildImages} made. */
export interface BuiltImages {
  /** The site's name. */
  site: string;
  /** The rootfs fingerprint. */
  fingerprint: string;
  /** The Incus alias, when imported into Incus. */
  incus?: string;
  /** The Docker image name, when imported into Docker. */
  docker?: string;
}

/**
 * Builds and imports the images of one site module.
 *
 * @param siteModule the path of a module whose default export is a `Site`
 * @param options the daemons to import into
 * @returns the image names
 * @throws {TypeError} when the module's default export is not a site
 */
export async function buildImages(
  siteModule: string,
  options: BuildImagesOptions,
): Promise<BuiltImages> {
  const log = options.log ?? (() => {});
  const imported: { default?: Partial<Site> } = await import(
    new URL(siteModule, `file://${Deno.cwd()}/`).href
  );
  const name = imported.default?.name;
  if (typeof name !== "string" || !/^[a-z][a-z0-9]*$/.test(name)) {
    throw new TypeError(
      `Cannot build an image of "${siteModule}": its default export is not a site with a lowercase name`,
    );
  }
  const repository = `webserv-${name}`;
  const stage = await Deno.makeTempDir({ prefix: "webserv-image-" });
  try {
    const started = performance.now();
    const rootfs = await buildRootfs(siteModule, {
      out: join(stage, "rootfs"),
    });
    log(
      `${name}: rootfs ${rootfs.fingerprint.slice(0, 12)} built in ${
        Math.round(performance.now() - started)
      } ms`,
    );
    const result: BuiltImages = { site: name, fingerprint: rootfs.fingerprint };
    if (options.incus) {
      const properties = await options.incus.aliasedImageProperties(repository);
      if (properties?.["webserv.fingerprint"] === rootfs.fingerprint) {
        log(`${name}: Incus image "${repository}" is up to date`);
      } else {
        await Deno.writeTextFile(
          join(stage, "metadata.yaml"),
          `architecture: x86_64
creation_date: ${Math.floor(Date.now() / 1000)}
properties:
  description: WebServ site ${name}
  os: busybox
  webserv.fingerprint: "${rootfs.fingerprint}"
`,
        );
        await options.incus.importImage(
          tar(stage, ["metadata.yaml", "rootfs"]),
          repository,
        );
        log(`${name}: imported into Incus as "${repository}"`);
      }
      result.incus = repository;
    }
    if (options.docker) {
      const tag = rootfs.fingerprint.slice(0, 12);
      if (await options.docker.hasImage(`${repository}:${tag}`)) {
        log(`${name}: Docker image "${repository}:${tag}" is up to date`);
      } else {
        await options.docker.importImage(
          tar(rootfs.path, ["."]),
          repository,
          tag,
          ["/sbin/init"],
        );
        log(`${name}: imported into Docker as "${repository}:${tag}"`);
      }
      await options.docker.tagImage(`${repository}:${tag}`, repository, "latest");
      result.docker = `${repository}:latest`;
    }
    return result;
  } finally {
    await Deno.remove(stage, { recursive: true });
  }
}

function tar(directory: string, entries: string[]): ReadableStream<Uint8Array> {
  const child = new Deno.Command("tar", {
    args: ["-C", directory, "-cf", "-", ...entries],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  return child.stdout;
}

if (import.meta.main) {
  const args = Deno.args.filter((a) => !a.startsWith("--"));
  const flags = new Set(Deno.args.filter((a) => a.startsWith("--")));
  if (args.length === 0) {
    console.error(
      "Usage: deno task image [--no-incus] [--no-docker] SITE_MODULE...",
    );
    Deno.exit(2);
  }
  using incus = new IncusClient();
  using docker = new DockerClient();
  for (const module of args) {
    await buildImages(module, {
      ...(flags.has("--no-incus") ? {} : { incus }),
      ...(flags.has("--no-docker") ? {} : { docker }),
      log: (message) => console.log(message),
    });
  }
}
