/**
 * The in-process side of `deno task bench:rollouts`: the reference flow's
 * episodes driven straight through `Env` in this process, with no rollout
 * server. Each turn asks the same scripted model server (a Python process
 * running `webserv.scripted_model`, the same latency) for the next tool call
 * with the same messages the harness sends, parses it as the server does
 * (`parseAction`), and steps the env; the reward comes from the task's
 * verifier. So both modes run the same episodes against the same model, and
 * what differs is the server between them.
 *
 * @module
 */
import process from "node:process";
import { ActionError, actionTools, Browser, Env, parseAction } from "../mod.ts";
import { FixtureSandbox, Gateway, type Sandbox } from "../sandboxes/mod.ts";
import { SharedRuntimeSandbox } from "../sandboxes/incus/mod.ts";
import { type Catalog, defaultCatalog } from "../adapters/http/catalog.ts";
import type { Placement } from "../adapters/http/catalog.ts";
import { APPS, SHARED_RUNTIME_APPS } from "../fixtures/sites/mod.ts";
import { spawnForUrl } from "./_child_url.ts";
import { type RolloutJob, type RunResult, taskOf } from "./_rollouts_job.ts";

export type { RunResult };

/** An in-process run: the job both modes share, and the Python that runs the scripted model. */
export interface InProcessJob extends RolloutJob {
  /** The Python that runs the scripted model. */
  python: string;
  /** The `PYTHONPATH` holding the `webserv` package. */
  pythonPath: string;
}

/** The catalog the server's backend of the same name serves. */
function catalogOf(job: RolloutJob): Catalog {
  return job.backend === "shared"
    ? defaultCatalog(SHARED_RUNTIME_APPS.map((name) => APPS[name]!), { demo: false })
    : defaultCatalog();
}

/** A site's sandbox, as the server's backend of the same name opens it (its defaults: 2 spares). */
async function openSandbox(
  job: RolloutJob,
  site: Placement["site"],
  gateway: Gateway,
): Promise<Sandbox> {
  if (job.backend === "fixture") return new FixtureSandbox(site, { gateway });
  return await SharedRuntimeSandbox.open({
    gateway,
    image: `webserv-${site.name}`,
    pool: "webserv-btrfs",
  });
}

/** A counting semaphore: at most `width` holders at once. */
function semaphore(width: number): <T>(run: () => Promise<T>) => Promise<T> {
  let free = width;
  const waiting: (() => void)[] = [];
  return async (run) => {
    if (free > 0) free--;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await run();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free++;
    }
  };
}

/** The harness's system prompt (adapters/python/webserv/harness.py `SYSTEM_PROMPT`). */
const SYSTEM_PROMPT =
  "You operate a web browser through tools. Each observation lists the page; elements you can act on " +
  "carry an id in brackets, like [3]. Call one tool at a time. When the task is done, call stop with " +
  "your answer.";

const MAX_TURNS = 16;

interface ToolCall {
  id?: string;
  function?: { name?: string; arguments?: string };
}
interface Message {
  role: string;
  content?: string | null;
  tool_calls?: ToolCall[] | null;
  tool_call_id?: string;
}

/** Starts `python -m webserv.scripted_model` and returns its base URL and a stop function. */
async function startModel(
  job: InProcessJob,
): Promise<{ baseUrl: string; stop: () => Promise<void> }> {
  const { url, child } = await spawnForUrl(
    new Deno.Command(job.python, {
      args: ["-m", "webserv.scripted_model", "--port", "0", "--latency", String(job.latency)],
      env: { PYTHONPATH: job.pythonPath },
      stdout: "piped",
      stderr: "inherit",
    }),
    /^(http:\/\/127\.0\.0\.1:\d+\S*)\s*\n/,
    "The scripted model",
    30_000,
  );
  return {
    baseUrl: url,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

/**
 * Runs the episodes in-process and measures them.
 *
 * @param job what to run
 * @returns what the measured loop did
 */
export async function runInProcess(job: InProcessJob): Promise<RunResult> {
  const model = await startModel(job);
  await using browser = await Browser.launch();
  await using gateway = new Gateway();
  const catalog = catalogOf(job);
  const sandboxes = new Map<Placement["site"], Promise<Sandbox>>();
  const tools = actionTools("openai");
  const latencies: number[] = [];
  const errors: string[] = [];
  let measuring = false;
  let rewards: number[] = [];
  let steps = 0;
  const opening = semaphore(job.openWidth);

  async function chat(messages: Message[]): Promise<Message> {
    const response = await fetch(`${model.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "scripted", messages, tools }),
    });
    const body = await response.json() as { choices?: { message?: Message }[] };
    const message = body.choices?.[0]?.message;
    if (!response.ok || !message) throw new Error(`The model answered ${response.status}`);
    return message;
  }

  async function one(slot: number, index: number): Promise<void> {
    const placement = await catalog.resolve({ task: taskOf(job, slot, index) });
    let sandbox = sandboxes.get(placement.site);
    if (!sandbox) {
      sandbox = openSandbox(job, placement.site, gateway);
      sandboxes.set(placement.site, sandbox);
    }
    const from = await sandbox;
    const { instance, env, first, task } = await opening(async () => {
      const instance = await from.create({ seed: placement.seed });
      const task = placement.bind?.(instance);
      try {
        const env = await Env.create(browser, { site: instance, ...(task ? { task } : {}) });
        try {
          // The server's create answers with the first observation: part of the open.
          return { instance, env, task, first: await env.observe() };
        } catch (error) {
          await env.close();
          throw error;
        }
      } catch (error) {
        await instance.destroy();
        throw error;
      }
    });
    try {
      try {
        const messages: Message[] = [
          { role: "system", content: SYSTEM_PROMPT },
          { role: "user", content: `Task: ${task?.instruction ?? ""}\n\n${first.text}` },
        ];
        let done = false;
        let taken = 0;
        for (let turn = 0; !done && turn < MAX_TURNS; turn++) {
          const message = await chat([...messages]);
          messages.push(message);
          const calls = message.tool_calls ?? [];
          if (calls.length === 0) break;
          for (const call of calls) {
            let content: string;
            if (done) {
              content = "Error: the episode has ended";
            } else {
              const args = JSON.parse(call.function?.arguments ?? "{}") as Record<string, unknown>;
              const plain = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null));
              const started = performance.now();
              try {
                const result = await env.step(
                  parseAction({ ...plain, action: call.function?.name }),
                );
                done = result.done || result.truncated;
                content = done ? "The episode has ended." : result.observation.text;
              } catch (error) {
                if (!(error instanceof ActionError)) throw error;
                content = `Error: ${error.message}`;
              }
              if (measuring) latencies.push(performance.now() - started);
              taken++;
            }
            messages.push({ role: "tool", tool_call_id: call.id ?? "", content });
          }
        }
        const verdict = await env.verify();
        if (measuring) {
          rewards.push(verdict.reward);
          steps += taken;
        }
      } finally {
        await env.close();
      }
    } finally {
      await instance.destroy();
    }
  }

  async function guarded(slot: number, index: number): Promise<void> {
    try {
      await one(slot, index);
    } catch (error) {
      errors.push(String(error).slice(0, 300));
    }
  }

  try {
    // Warm-up (the JIT, the seeds' files), as many rollouts at once as the smallest size.
    await Promise.all(
      Array.from({ length: job.warmUp }, (_, slot) => guarded(slot, 0)),
    );
    const warmErrors = errors.length;
    measuring = true;
    rewards = [];
    const own = process.cpuUsage();
    const started = performance.now();
    await Promise.all(Array.from({ length: job.sessions }, async (_, slot) => {
      for (let index = 1; index <= job.rollouts; index++) await guarded(slot, index);
    }));
    const seconds = (performance.now() - started) / 1000;
    const { user, system } = process.cpuUsage(own);
    return {
      rollouts: rewards.length,
      solved: rewards.filter((r) => r === 1).length,
      errorCount: errors.length - warmErrors,
      errors: errors.slice(warmErrors, warmErrors + 5),
      steps,
      seconds,
      cpuMs: (user + system) / 1000,
      latencies,
    };
  } finally {
    for (const sandbox of sandboxes.values()) await (await sandbox.catch(() => undefined))?.close();
    await model.stop();
  }
}
