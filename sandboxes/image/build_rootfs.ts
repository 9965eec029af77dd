/**
 * Builds the root filesystem the Incus and Docker instances run, from local
 * files only (no image server is reachable): busybox-static, the deno binary
 * with the few glibc libraries it links, the site module bundled with its npm
 * dependencies into one script, and an init that brings up loopback and runs
 * {@linkcode serveSite}.
 *
 * Bundling means the container needs no npm cache and no network: the same
 * site module the fixture backend runs, hono included, is one file.
 *
 * @module
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** Options of {@linkcode buildRootfs}. */
export interface BuildRootfsOptions {
  /** The folder to fill; created, and emptied first if it exists. */
  out: string;
  /**
   * The `deno.json` whose import map resolves the site's imports.
   *
   * @default {the nearest deno.json above the site module}
   */
  config?: string;
  /**
   * The deno binary copied into the image.
   *
   * @default {Deno.execPath()}
   */
  deno?: string;
  /**
   * The statically linked busybox copied into the image.
   *
   * @default {"/bin/busybox"}
   */
  busybox?: string;
}

/** What {@linkcode buildRootfs} made. */
export interface Rootfs {
  /** The folder holding the root filesystem. */
  path: string;
  /** A hex digest of the site bundle, the init and the deno binary. */
  fingerprint: string;
}

const BUSYBOX_APPLETS = [
  "sh",
  "ip",
  "rm",
  "mkdir",
  "mount",
  "cat",
  "ls",
  "sleep",
  "ps",
  "kill",
  "env",
];

/** The init script: pid 1 of every instance. */
const INIT = `#!/bin/sh
# pid 1: a container's loopback starts down; the site needs none of the
# network, but deno opens loopback sockets internally.
export PATH=/bin HOME=/tmp DENO_DIR=/tmp/deno DENO_NO_UPDATE_CHECK=1
ip link set lo up 2>/dev/null
mkdir -p /run/ws /var/lib/site
exec /bin/deno run --allow-all --no-prompt --no-config --cached-only \\
  /srv/site.js >/run/ws/site.log 2>&1
`;

/**
 * Builds the root filesystem for a site module.
 *
 * @param siteModule the path of a module whose default export is a `Site`
 * @param options where to build, and which binaries to copy
 * @returns the folder and a fingerprint of its contents
 * @throws {Error} when bundling or copying fails
 */
export async function buildRootfs(
  siteModule: string,
  options: BuildRootfsOptions,
): Promise<Rootfs> {
  const out = resolve(options.out);
  await Deno.remove(out, { recursive: true }).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });
  for (
    const dir of [
      "bin",
      "dev",
      "etc",
      "proc",
      "run/ws",
      "srv",
      "sys",
      "tmp",
      "var/lib/site",
    ]
  ) {
    await Deno.mkdir(join(out, dir), { recursive: true });
  }
  await Deno.chmod(join(out, "tmp"), 0o1777);

  const busybox = options.busybox ?? "/bin/busybox";
  await Deno.copyFile(busybox, join(out, "bin/busybox"));
  for (const applet of BUSYBOX_APPLETS) {
    await Deno.symlink("busybox", join(out, "bin", applet));
  }
  const deno = options.deno ?? Deno.execPath();
  await Deno.copyFile(deno, join(out, "bin/deno"));
  for (const library of await sharedLibraries(deno)) {
    await Deno.mkdir(join(out, dirname(library)), { recursive: true });
    await Deno.copyFile(library, join(out, library));
  }
  await Deno.mkdir(join(out, "sbin"));
  await Deno.writeTextFile(join(out, "sbin/init"), INIT, { mode: 0o755 });
  await Deno.chmod(join(out, "sbin/init"), 0o755);
  await Deno.writeTextFile(
    join(out, "etc/passwd"),
    "root:x:0:0:root:/tmp:/bin/sh\n",
  );
  await Deno.writeTextFile(join(out, "etc/group"), "root:x:0:\n");

  await bundleSite(resolve(siteModule), join(out, "srv/site.js"), options);

  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(
      [
        await Deno.readTextFile(join(out, "srv/site.js")),
        INIT,
        (await Deno.stat(deno)).size,
        Deno.version.deno,
      ].join("\n"),
    ),
  );
  const fingerprint = Array.from(
    new Uint8Array(digest),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
  return { path: out, fingerprint };
}

async function bundleSite(
  siteModule: string,
  output: string,
  options: BuildRootfsOptions,
): Promise<void> {
  const serveSite = fileURLToPath(new URL("./serve_site.ts", import.meta.url));
  // A fixed folder: the bundle names the entry's path in a comment, and the
  // fingerprint must not change from one build to the next.
  const work = join(
    Deno.env.get("TMPDIR") ?? "/tmp",
    `webserv-bundle-${await shortHash(siteModule)}`,
  );
  await Deno.mkdir(work, { recursive: true });
  try {
    const entry = join(work, "entry.ts");
    await Deno.writeTextFile(
      entry,
      `import site from ${JSON.stringify(pathToFileURL(siteModule).href)};
import { serveSite } from ${JSON.stringify(pathToFileURL(serveSite).href)};
const env = Deno.env.toObject();
await serveSite(site, {
  socketDirectory: env.WS_SOCKETS ?? "/run/ws",
  database: env.WS_DATABASE ?? "/var/lib/site/site.sqlite",
  seed: Number(env.WS_SEED ?? "0"),
  ...(env.WS_SITE_PORT ? { tcpPort: Number(env.WS_SITE_PORT) } : {}),
}).finished;
`,
    );
    const config = options.config ?? await nearestConfig(siteModule);
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "bundle",
        "--quiet",
        "--platform=deno",
        `--config=${config}`,
        `--output=${output}`,
        entry,
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (code !== 0) {
      throw new Error(
        `Cannot bundle "${siteModule}": ${new TextDecoder().decode(stderr)}`,
      );
    }
  } finally {
    await Deno.remove(work, { recursive: true });
  }
}

async function shortHash(text: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(text),
  );
  return Array.from(new Uint8Array(digest).slice(0, 6), (b) => b.toString(16).padStart(2, "0"))
    .join("");
}

async function nearestConfig(path: string): Promise<string> {
  for (let dir = dirname(path);; dir = dirname(dir)) {
    const candidate = join(dir, "deno.json");
    try {
      await Deno.stat(candidate);
      return candidate;
    } catch {
      if (dirname(dir) === dir) {
        throw new Error(`Cannot find a deno.json above "${path}"`);
      }
    }
  }
}

async function sharedLibraries(binary: string): Promise<string[]> {
  const { code, stdout } = await new Deno.Command("ldd", {
    args: [binary],
    stdout: "piped",
    stderr: "null",
  }).output();
  if (code !== 0) return [];
  const libraries = new Set<string>();
  for (const match of new TextDecoder().decode(stdout).matchAll(/(\/\S+)/g)) {
    if (match[1] !== undefined) libraries.add(match[1]);
  }
  return [...libraries];
}
