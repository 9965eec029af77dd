/**
 * Fork latency through the rollout server (`BENCH_SERVER_FORK=1 deno task
 * bench:server`, results in `bench/results/server_fork.{md,json}`): on the
 * fixture backend and the demo task, with a note typed but not submitted,
 * `POST /v1/sessions/{id}/fork` for n = 1, 4, 16 beside `POST /v1/sessions`
 * and `POST /v1/sessions/{id}/reset`, in one run, over loopback HTTP. Each
 * fork starts with the browser's warm pool of contexts refilled (as between
 * an agent's forks, a step or more apart); one row of n = 1 forks back to
 * back, the pool refilling while the next fork runs.
 *
 * Environment: BENCH_FORK_RUNS (samples per row, default 10).
 *
 * @module
 */
import { startServer } from "../adapters/http/server.ts";
import { WebServClient } from "../adapters/client/mod.ts";
import { ContextPool } from "../engine/context_pool.ts";
import { machine, type TimedRow, timeRuns } from "./_sandbox_common.ts";

const RUNS = Number(Deno.env.get("BENCH_FORK_RUNS") ?? 10);
const TASK = "demo/add-note/2";

const time = <T>(
  what: string,
  fn: () => Promise<T>,
  after: (value: T) => Promise<void>,
): Promise<TimedRow> => timeRuns(what, RUNS, fn, after);

/**
 * Measures fork latency through the server beside create and reset, and
 * writes the report.
 *
 * @returns the report's markdown
 */
export async function benchServerFork(): Promise<string> {
  await using server = await startServer({ port: 0, maxSessions: 40 });
  const client = new WebServClient(server.url);
  const closeAll = async (ids: string[]) => {
    await Promise.all(ids.map((id) => client.close(id)));
  };
  // Warm: the seed's template, the browser.
  await client.close((await client.createSession({ task: TASK })).id);
  const rows: TimedRow[] = [];
  rows.push(
    await time(
      "POST /v1/sessions",
      () => client.createSession({ task: TASK }),
      (s) => closeAll([s.id]),
    ),
  );
  const resetting = await client.createSession({ task: TASK });
  rows.push(await time("POST …/reset", () => client.reset(resetting.id), () => Promise.resolve()));
  await client.close(resetting.id);
  const parent = await client.createSession({ task: TASK });
  const field = parent.observation.text.split("\n").find((l) => /textbox "?New note/.test(l));
  const id = Number(field?.match(/\[(\d+)\]/)?.[1]);
  await client.step(parent.id, { action: "type", id, text: "buy coffee 2" });
  const pool = ContextPool.of(server.browser!);
  const refilled = async () => {
    const deadline = performance.now() + 30_000;
    while (pool.filling > 0 || pool.ready < pool.size) {
      if (performance.now() > deadline) throw new Error("The context pool did not refill");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  // The first fork warms the pool.
  await closeAll((await client.fork(parent.id, 1)).sessions.map((s) => s.id));
  await refilled();
  for (const n of [1, 4, 16]) {
    rows.push(
      await time(
        `POST …/fork {n: ${n}}`,
        () => client.fork(parent.id, n),
        async (made) => {
          await closeAll(made.sessions.map((s) => s.id));
          await refilled();
        },
      ),
    );
  }
  rows.push(
    await time(
      "POST …/fork {n: 1}, back to back",
      () => client.fork(parent.id, 1),
      (made) => closeAll(made.sessions.map((s) => s.id)),
    ),
  );
  await client.close(parent.id);

  const meta = {
    date: new Date().toISOString(),
    machine: machine(),
    load: (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(", "),
    runs: RUNS,
    task: TASK,
  };
  const reset = rows.find((r) => r.what === "POST …/reset")!.ms.p50;
  const markdown = [
    "# Fork latency through the server (fixture backend)",
    "",
    `${meta.date} · ${meta.machine}, load average ${meta.load} · ${RUNS} samples per row · ${TASK}, a note typed, not sent`,
    "",
    "| request | p50 ms | p95 ms | p50 ÷ reset |",
    "| --- | ---: | ---: | ---: |",
    ...rows.map((r) =>
      `| ${r.what} | ${r.ms.p50} | ${r.ms.p95} | ${(r.ms.p50 / reset).toFixed(2)} |`
    ),
    "",
  ].join("\n");
  await Deno.mkdir(new URL("./results/", import.meta.url), { recursive: true });
  await Deno.writeTextFile(
    new URL("./results/server_fork.json", import.meta.url),
    JSON.stringify({ meta, rows }, null, 2) + "\n",
  );
  await Deno.writeTextFile(new URL("./results/server_fork.md", import.meta.url), markdown);
  return markdown;
}
