/**
 * Runs TRL's `GRPOTrainer` against the rollout server for a few steps
 * (`test/adapters/python/trl_grpo.py`) and writes what ran to
 * `bench/results/trl.md`. Used by `deno task test:trl`.
 *
 * The venv is TRL's own, never the shared test venv: `$WEBSERV_TRL_VENV`
 * (default `~/.cache/webserv-venv-trl`), made when missing and installed from
 * `adapters/python/requirements-trl.txt` when that file changed (torch from
 * PyPI: several GB the first time), with the webserv package from
 * `./adapters/python` on top. The server runs in this process on 127.0.0.1
 * (fixture backend, four sessions at most). The Python script asserts the
 * trainer's side (steps done, the verifier as its only reward, a scripted
 * rollout's reward of 1 reaching the trainer's reward function); this tool
 * checks the server's side (sessions opened, none left live) and fails on
 * either.
 *
 * @module
 */
import { startServer } from "../adapters/http/server.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const HOME = Deno.env.get("HOME") ?? "/root";
const VENV = Deno.env.get("WEBSERV_TRL_VENV") ?? `${HOME}/.cache/webserv-venv-trl`;
const REQUIREMENTS = `${ROOT}adapters/python/requirements-trl.txt`;
const PACKAGE = `${ROOT}adapters/python`;
const SCRIPT = `${ROOT}test/adapters/python/trl_grpo.py`;
const RESULTS = `${ROOT}bench/results/trl.md`;

/** What trl_grpo.py prints on its last line. */
interface Summary {
  versions: Record<string, string>;
  python: string;
  steps: number;
  train_seconds: number;
  total_seconds: number;
  model: { layers: number; hidden: number; vocab: number; parameters: number };
  config: {
    num_generations: number;
    max_completion_length: number;
    max_tool_calling_iterations: number;
  };
  envs_made: number;
  last_step_verdicts: number[];
  server_steps_in_training: number;
  sessions_created: number;
  live_after: number;
  scripted_reward: number;
  untouched_reward: number;
  log: Array<Record<string, number>>;
}

async function run(command: string, args: string[], env: Record<string, string> = {}): Promise<
  string
> {
  const output = await new Deno.Command(command, {
    args,
    cwd: ROOT,
    env,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  if (!output.success) {
    throw new Error(`Command failed: ${command} ${args.join(" ")}: exit ${output.code}\n${text}`);
  }
  return text;
}

async function sha256(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

function readText(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return undefined;
  }
}

/** Makes the venv and installs the pinned requirements when they changed; returns its Python. */
async function prepareVenv(): Promise<string> {
  const python = `${VENV}/bin/python`;
  if (readText(python) === undefined) {
    console.error(`Making the TRL venv at ${VENV}`);
    await run("python3", ["-m", "venv", VENV]);
  }
  const stamp = `${VENV}/.requirements.sha256`;
  const want = await sha256(REQUIREMENTS);
  if (readText(stamp)?.trim() !== want) {
    console.error(`Installing ${REQUIREMENTS} (torch from PyPI: several GB the first time)`);
    const started = performance.now();
    await run(python, ["-m", "pip", "install", "--disable-pip-version-check", "-r", REQUIREMENTS]);
    console.error(`Installed in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    await Deno.writeTextFile(stamp, want);
  }
  // The package as users install it; quick, so always (its sources change often).
  await run(python, [
    "-m",
    "pip",
    "install",
    "--quiet",
    "--disable-pip-version-check",
    "--no-deps",
    "--force-reinstall",
    PACKAGE,
  ]);
  for (const leftover of ["build", "openenv_webserv.egg-info"]) {
    await Deno.remove(`${PACKAGE}/${leftover}`, { recursive: true }).catch(() => {});
  }
  return python;
}

function report(summary: Summary, liveAfter: number, created: number): string {
  const versions = Object.entries(summary.versions).map(([name, version]) => `${name} ${version}`)
    .join(", ");
  const rows = summary.log.map((entry) =>
    `| ${entry.step} | ${entry["rewards/WebServToolEnv/mean"]} | ${
      entry["tools/call_frequency"] ?? "–"
    } | ${entry["tools/failure_frequency"] ?? "–"} | ${entry.loss ?? "–"} |`
  );
  return [
    "# TRL: GRPOTrainer through webserv.trl",
    "",
    "`deno task test:trl` (tools/test_trl.ts running test/adapters/python/trl_grpo.py): TRL's",
    "`GRPOTrainer` with `environment_factory=webserv.trl.environment_factory(url)` against the",
    "rollout server (fixture backend, demo site's add-note tasks, 127.0.0.1), CPU only. The model is a",
    `randomly initialised Qwen2 (${summary.model.layers} layers, hidden ${summary.model.hidden}, ` +
    `${summary.model.parameters} parameters)`,
    `with a byte-level BPE tokenizer of ${summary.model.vocab} tokens trained on the task text and the`,
    "tool schemas, Qwen2.5's chat template; whole tool-call bodies are single tokens and sampling",
    "favours them (a `sequence_bias`), so the random model emits calls TRL parses and runs through the",
    "env. The only reward source is the env's `get_reward()` (the task verifier). " +
    `${summary.config.num_generations} generations per`,
    `prompt, ${summary.config.max_completion_length} completion tokens at most, ` +
    `${summary.config.max_tool_calling_iterations} tool-calling iterations at most.`,
    "",
    `Versions: ${versions}, Python ${summary.python}.`,
    "",
    `Steps: ${summary.steps}, training ${summary.train_seconds} s, whole script ` +
    `${summary.total_seconds} s.`,
    "",
    "| step | reward (verifier) mean | tool calls per rollout | tool failures | loss |",
    "| --- | --- | --- | --- | --- |",
    ...rows,
    "",
    `The verifier's verdicts on the last step's rollouts: ${
      summary.last_step_verdicts.join(", ")
    } (the logged mean is theirs).`,
    `Actions the server ran for the trainer's tool calls: ${summary.server_steps_in_training}.`,
    `Envs the factory made: ${summary.envs_made}; sessions the server opened in the run: ${created}; ` +
    `live at the end: ${liveAfter}.`,
    `A scripted rollout through an env the trainer used, scored by the trainer's reward function: ` +
    `${summary.scripted_reward}; an untouched episode: ${summary.untouched_reward}.`,
    "",
  ].join("\n");
}

const python = await prepareVenv();
await using server = await startServer({ port: 0, maxSessions: 4 });
const stdout = await run(python, [SCRIPT], {
  WEBSERV_URL: server.url,
  HF_HUB_OFFLINE: "1",
  WEBSERV_TRL_OUTPUT: await Deno.makeTempDir({ prefix: "webserv-trl-" }),
});
const last = stdout.trim().split("\n").at(-1) ?? "";
const summary = JSON.parse(last) as Summary;
const health = await (await fetch(`${server.url}/health`)).json() as { live: number };
const metrics = await (await fetch(`${server.url}/metrics`)).text();
const created = Number(metrics.match(/^webserv_sessions_created_total (\d+)$/m)?.[1] ?? NaN);
const failures = [
  ...(health.live === 0 ? [] : [`${health.live} sessions still live after the run`]),
  ...(created >= summary.envs_made && summary.envs_made > 0
    ? []
    : [`The server opened ${created} sessions for ${summary.envs_made} envs`]),
  ...(summary.steps > 0 ? [] : ["The trainer did no step"]),
];
if (failures.length > 0) throw new Error(`The TRL run failed its checks:\n${failures.join("\n")}`);
await Deno.writeTextFile(RESULTS, report(summary, health.live, created));
console.log(`TRL: ${summary.steps} steps in ${summary.train_seconds} s; wrote ${RESULTS}`);
