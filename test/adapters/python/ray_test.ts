// webserv.ray.WebServPool with Ray from PyPI (pinned in requirements-test.txt)
// on a real two-node cluster (_ray_cluster.ts): test_ray.py, then docs/python.md's
// Ray snippet as written. Fails loudly when the venv lacks ray.
import { assert, assertEquals } from "@std/assert";
import { pytest, venvPython } from "./_venv.ts";
import { startRayCluster } from "./_ray_cluster.ts";
import { packageReadmeBlocks, pythonBlocks } from "./_package_readme.ts";

const PAGE = new URL("../../../docs/python.md", import.meta.url);

async function assertRayInstalled(python: string): Promise<void> {
  const out = await new Deno.Command(python, {
    args: ["-c", "import ray; print(ray.__version__)"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert(
    out.success,
    `The test venv has no ray: run "bash .ci/python.sh" (requirements-test.txt pins it)\n${
      new TextDecoder().decode(out.stderr)
    }`,
  );
}

// The python block of docs/python.md that uses webserv.ray.
async function readmeRayBlock(): Promise<string> {
  const ray = (await pythonBlocks(PAGE)).filter((code) => code.includes("webserv.ray"));
  assertEquals(ray.length, 1, "Expected one webserv.ray block in docs/python.md");
  return ray[0]!;
}

Deno.test("WebServPool on a two-node Ray cluster: placement, GRPO groups, a killed server's sessions are env_error", async () => {
  const python = venvPython();
  await assertRayInstalled(python);
  await using cluster = await startRayCluster();
  const env = {
    RAY_ADDRESS: cluster.address,
    RAY_USAGE_STATS_ENABLED: "0",
    WEBSERV_RAY_NODES: cluster.nodes.join(","),
    WEBSERV_RAY_PIDS: cluster.pidsFile,
    WEBSERV_RUN_DIR: `${cluster.dir}/runs`,
  };
  try {
    await pytest(["test_ray.py"], env);
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : error}\n${await cluster.logs()}`);
  }
  // The page's lines, as written, on the same cluster.
  const out = await new Deno.Command(python, {
    args: ["-c", await readmeRayBlock()],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert(
    out.success,
    `The Ray block of docs/python.md failed:\n${new TextDecoder().decode(out.stderr)}`,
  );
});

Deno.test("the Python package README's Ray block runs on one machine (a local ray.init())", async () => {
  const python = venvPython();
  await assertRayInstalled(python);
  const [block, ...more] = await packageReadmeBlocks(true);
  assertEquals(more.length, 0, "one Ray block in adapters/python/README.md");
  const env: Record<string, string> = {
    ...Deno.env.toObject(),
    RAY_USAGE_STATS_ENABLED: "0",
    // Without this a local ray.init() writes ~/.ray/auth_token, which every
    // later cluster on this machine (auth disabled) then refuses.
    RAY_AUTH_MODE: "disabled",
    // The servers' trajectories, out of the checkout.
    WEBSERV_RUN_DIR: await Deno.makeTempDir({ prefix: "webserv-ray-readme-" }),
  };
  delete env.RAY_ADDRESS; // ray.init() starts its own cluster, as on a laptop
  const out = await new Deno.Command(python, {
    args: ["-c", block!],
    cwd: new URL("../../../", import.meta.url).pathname, // the checkout the pool serves from
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert(
    out.success,
    `The package README's Ray block failed:\n${new TextDecoder().decode(out.stderr)}`,
  );
});
