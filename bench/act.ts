/**
 * Settling benchmark: for every SPA fixture, how long after an action each
 * strategy returns, against the page's true completion time, and how often it
 * returns before the page is done (an early return).
 *
 * Strategies, side by side in one run, each on fresh contexts with the same
 * pages (the settler's hook is installed for all, so pages run alike):
 * - `webserv`: `Settler.settle()`;
 * - `playwright-mcp`: Playwright MCP's documented wait, reimplemented: collect
 *   requests started during the action, wait for them (or for the load event
 *   when the main frame navigated), then wait 500 ms; 10 s cap;
 * - `stagehand`: Stagehand's network-quiet wait, reimplemented: no request in
 *   flight (WebSocket and EventSource excluded, requests stalled over 2 s
 *   dropped) for 500 ms, 5 s cap;
 * - `sleep-1s`: a fixed 1 s sleep.
 *
 * The strategies take turns per scenario and repetition, in a rotating order.
 * Overshoot is the time from the page's true completion to the strategy's
 * return. Results go to `bench/results/act.json` and `bench/results/act.md`.
 *
 * Run with `deno task bench:act` (`-- --reps 5` for more repetitions).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { Browser, type CdpSession, type Page, Settler } from "../engine/mod.ts";
import {
  performSpaAction,
  readSpaDone,
  readSpaText,
  serveSpa,
  SPA_SCENARIOS,
  spaClock,
  type SpaScenario,
} from "../fixtures/spa/mod.ts";
import { browserInternals, newContext } from "../engine/browser/browser.ts";

type Strategy = "webserv" | "playwright-mcp" | "stagehand" | "sleep-1s";
const STRATEGIES: Strategy[] = ["webserv", "playwright-mcp", "stagehand", "sleep-1s"];

interface Run {
  scenario: string;
  strategy: Strategy;
  /** Action start to the page's true completion, in ms. */
  trueMs: number | null;
  /** Action start to the strategy's return, in ms. */
  returnedMs: number;
  /** Return minus true completion, in ms; negative for an early return. */
  overshootMs: number | null;
  early: boolean;
  domOk: boolean;
}

const { values } = parseArgs({
  args: Deno.args,
  options: { reps: { type: "string", default: "3" }, only: { type: "string" } },
});
const reps = Math.max(1, Number(values.reps) || 3);

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Every session of a page now and later: its own and its frames'. */
function watchSessions(page: Page, on: (session: CdpSession) => () => void): () => void {
  const offs = [page.session, ...page.frameSessions].map(on);
  const onFrame = (session: CdpSession) => offs.push(on(session));
  page.on("frameattached", onFrame);
  return () => {
    page.off("frameattached", onFrame);
    for (const off of offs) off();
  };
}

/** Playwright MCP's `waitForCompletion`, reimplemented over raw CDP. */
async function playwrightMcp(page: Page, action: () => Promise<void>): Promise<void> {
  const requests = new Set<string>();
  let navigated = false;
  let release: () => void = () => {};
  const barrier = new Promise<void>((resolve) => release = resolve);
  const stop = watchSessions(page, (session) => {
    const onRequest = ({ requestId }: { requestId: string }) => requests.add(requestId);
    const onDone = ({ requestId }: { requestId: string }) => {
      if (requests.delete(requestId) && requests.size === 0 && !navigated) release();
    };
    const onNavigated = ({ frame }: { frame: { parentId?: string } }) => {
      if (frame.parentId !== undefined || navigated) return;
      navigated = true;
      page.session.waitForEvent("Page.loadEventFired", { timeoutMs: 10_000 })
        .then(() => release(), () => release());
    };
    session.on("Network.requestWillBeSent", onRequest);
    session.on("Network.loadingFinished", onDone);
    session.on("Network.loadingFailed", onDone);
    if (session === page.session) session.on("Page.frameNavigated", onNavigated);
    return () => {
      session.off("Network.requestWillBeSent", onRequest);
      session.off("Network.loadingFinished", onDone);
      session.off("Network.loadingFailed", onDone);
      session.off("Page.frameNavigated", onNavigated);
    };
  });
  const cap = setTimeout(release, 10_000);
  try {
    await action();
    if (requests.size === 0 && !navigated) release();
    await barrier;
    await delay(500);
  } finally {
    clearTimeout(cap);
    stop();
  }
}

/** Stagehand's network-quiet wait, reimplemented over raw CDP. */
async function stagehand(page: Page, action: () => Promise<void>): Promise<void> {
  const inflight = new Map<string, number>();
  let wake: () => void = () => {};
  const stop = watchSessions(page, (session) => {
    const onRequest = (
      { requestId, type }: { requestId: string; type?: string },
    ) => {
      if (type === "WebSocket" || type === "EventSource") return;
      inflight.set(requestId, performance.now());
      wake();
    };
    const onDone = ({ requestId }: { requestId: string }) => {
      inflight.delete(requestId);
      wake();
    };
    session.on("Network.requestWillBeSent", onRequest);
    session.on("Network.loadingFinished", onDone);
    session.on("Network.loadingFailed", onDone);
    return () => {
      session.off("Network.requestWillBeSent", onRequest);
      session.off("Network.loadingFinished", onDone);
      session.off("Network.loadingFailed", onDone);
    };
  });
  try {
    await action();
    const deadline = performance.now() + 5_000;
    let quietSince = performance.now();
    while (performance.now() < deadline) {
      const now = performance.now();
      for (const [id, start] of inflight) if (now - start > 2_000) inflight.delete(id);
      if (inflight.size > 0) quietSince = now;
      else if (now - quietSince >= 500) return;
      const next = inflight.size > 0 ? 100 : 500 - (now - quietSince);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => resolve(), Math.min(next, deadline - now));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = () => {};
    }
  } finally {
    stop();
  }
}

async function runOnce(
  browser: Browser,
  origin: string,
  scenario: SpaScenario,
  strategy: Strategy,
): Promise<Run> {
  await using context = await newContext(browser);
  const settler = Settler.install(context);
  const page = await context.newPage(scenario.path ? origin + scenario.path : "about:blank");
  await settler.settle(page);
  const action = () => performSpaAction(page, scenario.action, origin);
  const since = performance.now();
  const start = spaClock();
  switch (strategy) {
    case "webserv":
      await action();
      await settler.settle(page, { since });
      break;
    case "playwright-mcp":
      await playwrightMcp(page, action);
      break;
    case "stagehand":
      await stagehand(page, action);
      break;
    case "sleep-1s":
      await action();
      await delay(1_000);
      break;
  }
  const returned = spaClock();
  let doneAt = await readSpaDone(page).catch(() => undefined);
  const early = doneAt === undefined || doneAt > returned;
  if (doneAt === undefined) {
    // Let the page finish to learn its true completion time.
    await settler.settle(page, { capMs: 15_000 });
    doneAt = await readSpaDone(page).catch(() => undefined);
  }
  const text = await readSpaText(page, scenario.expect.selector).catch(() => undefined);
  return {
    scenario: scenario.name,
    strategy,
    trueMs: doneAt === undefined ? null : round(doneAt - start),
    returnedMs: round(returned - start),
    overshootMs: doneAt === undefined ? null : round(returned - doneAt),
    early,
    domOk: text?.includes(scenario.expect.text) ?? false,
  };
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

function quantile(values: number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index]!;
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const scenarios = SPA_SCENARIOS.filter((s) => !values.only || s.name === values.only);
const runs: Run[] = [];
{
  await using server = serveSpa();
  await using browser = await Browser.launch();
  const version = await browserInternals(browser).version();
  let turn = 0;
  for (const scenario of scenarios) {
    for (let rep = 0; rep < reps; rep++) {
      const order = STRATEGIES.map((_, i) => STRATEGIES[(i + turn) % STRATEGIES.length]!);
      turn++;
      for (const strategy of order) {
        const run = await runOnce(browser, server.origin, scenario, strategy);
        runs.push(run);
        console.log(
          `${scenario.name.padEnd(16)} ${
            strategy.padEnd(15)
          } true ${run.trueMs} ms, returned ${run.returnedMs} ms, overshoot ${run.overshootMs} ms${
            run.early ? " EARLY" : ""
          }${run.domOk ? "" : " DOM-WRONG"}`,
        );
      }
    }
  }

  const summary = STRATEGIES.map((strategy) => {
    const mine = runs.filter((run) => run.strategy === strategy);
    const overshoots = mine.filter((run) => !run.early && run.overshootMs !== null)
      .map((run) => run.overshootMs!);
    return {
      strategy,
      runs: mine.length,
      earlyReturns: mine.filter((run) => run.early).length,
      medianOvershootMs: median(overshoots),
      p90OvershootMs: quantile(overshoots, 0.9),
      medianReturnedMs: median(mine.map((run) => run.returnedMs)),
      wrongDom: mine.filter((run) => !run.domOk).length,
    };
  });
  const perScenario = scenarios.map((scenario) => ({
    scenario: scenario.name,
    description: scenario.description,
    medianTrueMs: median(
      runs.filter((run) => run.scenario === scenario.name && run.trueMs !== null)
        .map((run) => run.trueMs!),
    ),
    strategies: Object.fromEntries(STRATEGIES.map((strategy) => {
      const mine = runs.filter((run) =>
        run.scenario === scenario.name && run.strategy === strategy
      );
      return [strategy, {
        early: mine.filter((run) => run.early).length,
        medianOvershootMs: median(
          mine.filter((run) => !run.early && run.overshootMs !== null).map((run) =>
            run.overshootMs!
          ),
        ),
        medianReturnedMs: median(mine.map((run) => run.returnedMs)),
      }];
    })),
  }));
  const result = {
    date: new Date().toISOString(),
    chromium: version.product,
    deno: Deno.version.deno,
    cpus: navigator.hardwareConcurrency,
    reps,
    targets: { earlyReturns: 0, medianOvershootMs: 80 },
    summary,
    scenarios: perScenario,
    runs,
  };
  const ms = (value: number | null) => value === null ? "–" : `${Math.round(value)}`;
  const lines = [
    "# Settling benchmark (`deno task bench:act`)",
    "",
    `${result.date}, ${result.chromium}, Deno ${result.deno}, ${result.cpus} CPUs (shared), ${reps} runs per scenario and strategy.`,
    "Overshoot: time from the page's true completion to the strategy's return (early returns excluded).",
    "Early: the strategy returned before the page was done. Target for `webserv`: 0 early returns, median overshoot ≤ 80 ms.",
    "",
    "| strategy | runs | early returns | median overshoot ms | p90 overshoot ms | median return ms | wrong DOM |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...summary.map((s) =>
      `| ${s.strategy} | ${s.runs} | ${s.earlyReturns} | ${ms(s.medianOvershootMs)} | ${
        ms(s.p90OvershootMs)
      } | ${ms(s.medianReturnedMs)} | ${s.wrongDom} |`
    ),
    "",
    "Per scenario: median overshoot in ms (early returns in brackets).",
    "",
    `| scenario | true ms | ${STRATEGIES.join(" | ")} |`,
    `| --- | ---: | ${STRATEGIES.map(() => "---:").join(" | ")} |`,
    ...perScenario.map((s) =>
      `| ${s.scenario} | ${ms(s.medianTrueMs)} | ${
        STRATEGIES.map((strategy) => {
          const cell = s.strategies[strategy]!;
          return `${ms(cell.medianOvershootMs)}${cell.early ? ` (${cell.early} early)` : ""}`;
        }).join(" | ")
      } |`
    ),
    "",
  ];
  if (!values.only) {
    await Deno.mkdir(new URL("./results/", import.meta.url), { recursive: true });
    await Deno.writeTextFile(
      new URL("./results/act.json", import.meta.url),
      JSON.stringify(result, null, 2) + "\n",
    );
    await Deno.writeTextFile(new URL("./results/act.md", import.meta.url), lines.join("\n"));
  }
  console.log(lines.join("\n"));
}
