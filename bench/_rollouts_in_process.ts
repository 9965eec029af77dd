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
import { FixtureSandbox, Gateway } from "../sandboxes/mod.ts";
import { defaultCatalog } from "../adapters/http/catalog.ts";
import type { Placement } from "../adapters/http/catalog.ts";

/** What one measured run did, as both modes report it. */
export interface RunResult {
  /** Rollouts finished in the measured loop. */
  rollouts: number;
  /** Of those, rollouts the verifier gave 1. */
  solved: number;
  /** Infrastructure failures in the measured loop (never a reward). */
  errorCount: number;
  /** Up to five of their messages. */
  errors: string[];
  /** Steps taken in the measured loop. */
  steps: number;
  /** Wall time of the measured loop, s. */
  seconds: number;
  /** CPU of the server's process (server mode) or of this process (in-process) over the loop, ms. */
  cpuMs: number;
  /** Each step's latency, ms. */
  latencies: number[];
}

/** What an in-process run is asked to do. */
export interface InProcessJob {
  /** Concurrent rollouts. */
  sessions: number;
  /** Measured rollouts per slot, after up to 16 warm-up rollouts at once. */
  rollouts: number;
  /** The model's simulated latency per turn, s. */
  latency: number;
  /** `site/template`; the seed is appended per rollout. */
  taskPrefix: string;
  /** How many seeds the rollouts cycle through. */
  seeds: number;
  /** The Python that runs the scripted model. */
  python: string;
  /** The `PYTHONPATH` holding the `webserv` package. */
  pythonPath: string;
  /** Envs opened at most this many at a time (the server mode's client paces its opens alike). */
  openWidth: number;
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
  const child = new Deno.Command(job.python, {
    args: ["-m", "webserv.scripted_model", "--port", "0", "--latency", String(job.latency)],
    env: { PYTHONPATH: job.pythonPath },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  const deadline = setTimeout(() => child.kill("SIGKILL"), 30_000);
  while (!seen.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += value;
  }
  clearTimeout(deadline);
  const baseUrl = seen.split("\n")[0]?.trim() ?? "";
  if (!baseUrl.startsWith("http://127.0.0.1:")) {
    throw new Error(`The scripted model printed no URL: "${seen}"`);
  }
  return {
    baseUrl,
    async stop() {
      child.kill("SIGTERM");
      await reader.cancel();
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
  const catalog = defaultCatalog();
  const sandboxes = new Map<Placement["site"], FixtureSandbox>();
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
    const placement = await catalog.resolve({
      task: `${job.taskPrefix}/${(slot + index) % job.seeds}`,
    });
    let sandbox = sandboxes.get(placement.site);
    if (!sandbox) {
      sandbox = new FixtureSandbox(placement.site, { gateway });
      sandboxes.set(placement.site, sandbox);
    }
    const from = sandbox;
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
      Array.from({ length: Math.min(16, job.sessions) }, (_, slot) => guarded(slot, 0)),
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
    for (const sandbox of sandboxes.values()) await sandbox[Symbol.asyncDispose]?.();
    await model.stop();
  }
}
