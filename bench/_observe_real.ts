/**
 * The observation benchmark's real pages: every page of the real-app suite
 * (`fixtures/apps`), observed whole by this engine and snapshotted by
 * Playwright's `locator('body').ariaSnapshot()` side by side. Tokens,
 * content kept (the words of the page's visible text, from the suite's
 * ground-truth script, found in each text) and latency, interleaved; where
 * the engine's tokens go, line kind by line kind.
 *
 * @module
 */
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import type { Page as PwPage } from "playwright-core";
import type { Observer, Page } from "../engine/mod.ts";
import { APP_PAGES, type Truth } from "../fixtures/apps/mod.ts";
import { interleave, p50 } from "./_harness.ts";

/** One real page's figures. */
export interface RealPageRow {
  /** The page's path in the suite. */
  path: string;
  /** o200k_base tokens of the engine's text and of the snapshot. */
  tokens: number;
  /** Tokens of `locator('body').ariaSnapshot()`. */
  ariaTokens: number;
  /** The engine's tokens without its header line and ids, which the snapshot does not carry. */
  bareTokens: number;
  /** Share of the page's visible words the engine's text holds. */
  kept: number;
  /** The same for the snapshot. */
  ariaKept: number;
  /** Median milliseconds of a whole-page observation. */
  ms: number;
  /** Median milliseconds of the snapshot. */
  ariaMs: number;
}

/** What the real-page pass is handed. */
export interface RealPagesSetup {
  /** The engine's observer and the tab it observes. */
  observer: Observer;
  /** The engine's tab. */
  page: Page;
  /** Playwright's tab on the same browser. */
  pwPage: PwPage;
  /** The suite's URL of a path. */
  url(path: string): string;
  /** The ground-truth script (an expression answering a `Truth` as JSON). */
  truth: string;
}

/** The words of a text, lower-cased runs of letters and digits, with their counts. */
function words(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return counts;
}

/**
 * The share of `truth`'s words (with multiplicity) that `text` holds.
 *
 * @param truth the page's visible text
 * @param text what a method showed
 * @returns a fraction from 0 to 1 (1 when the page shows no words)
 */
export function contentKept(truth: string, text: string): number {
  const want = words(truth), have = words(text);
  let total = 0, found = 0;
  for (const [word, n] of want) {
    total += n;
    found += Math.min(n, have.get(word) ?? 0);
  }
  return total === 0 ? 1 : found / total;
}

const READY = `new Promise((resolve) => {
  const start = Date.now();
  (function poll() {
    if (window.__appReady || Date.now() - start > 15000) resolve(true);
    else setTimeout(poll, 10);
  })();
})`;

async function open(setup: RealPagesSetup, path: string): Promise<string> {
  const { page, pwPage } = setup;
  const loaded = page.session.waitForEvent("Page.loadEventFired", { timeoutMs: 60_000 });
  await page.session.send("Page.navigate", { url: setup.url(path) });
  await loaded;
  await page.session.send("Runtime.evaluate", { expression: READY, awaitPromise: true });
  await pwPage.goto(setup.url(path), { waitUntil: "load", timeout: 60_000 });
  await pwPage.waitForFunction("window.__appReady === true", undefined, { timeout: 15_000 })
    .catch(() => {/* a page that never says ready is measured as it is */});
  // The visible text of the top document and of every out-of-process frame.
  const texts: string[] = [];
  for (const session of [page.session, ...page.frameSessions]) {
    const { result } = await session.send("Runtime.evaluate", {
      expression: setup.truth,
      returnByValue: true,
      awaitPromise: true,
    }, { timeoutMs: 30_000 });
    texts.push((JSON.parse(String(result.value)) as Truth).text);
  }
  return texts.join("\n");
}

/**
 * Measures every real page: tokens and content kept once, latency over
 * `runs` interleaved rounds.
 *
 * @param setup the tabs and the suite
 * @param runs rounds of the two methods per page
 * @returns one row per page, in the suite's order
 */
export async function measureRealPages(
  setup: RealPagesSetup,
  runs: number,
): Promise<RealPageRow[]> {
  const rows: RealPageRow[] = [];
  for (const app of APP_PAGES) {
    const truth = await open(setup, app.path);
    const timed = await interleave(
      ["engine", "aria"] as const,
      runs,
      async (method) =>
        method === "engine"
          ? (await setup.observer.observe(setup.page)).text
          : await setup.pwPage.locator("body").ariaSnapshot({ timeout: 120_000 }),
    );
    const engine = timed.engine.value, aria = timed.aria.value;
    rows.push({
      path: app.path,
      tokens: encode(engine).length,
      ariaTokens: encode(aria).length,
      bareTokens: encode(withoutHeaderAndIds(engine)).length,
      kept: round(contentKept(truth, engine)),
      ariaKept: round(contentKept(truth, aria)),
      ms: timed.engine.ms,
      ariaMs: timed.aria.ms,
    });
    lastTexts.set(app.path, engine);
  }
  return rows;
}

/** A text without its header line and its ids: what the snapshot has no counterpart for. */
function withoutHeaderAndIds(text: string): string {
  return text.split("\n").slice(1).join("\n").replace(/\[\d+\] /g, "");
}

/** The engine's last text of each page, for {@linkcode tokenShares}. */
const lastTexts = new Map<string, string>();

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/** The line kinds of the engine's text, each as the edit that takes it out. */
const KINDS: [string, (text: string) => string][] = [
  ["header line (title, URL, scroll)", (t) => t.split("\n").slice(1).join("\n")],
  ["ids (`[12] `)", (t) => t.replace(/\[\d+\] /g, "")],
  ["link targets (` → /path`)", (t) => t.replace(/ → \S+/g, "")],
  ["quotes around names", (t) => t.replace(/"/g, "")],
  ["role words", (t) => t.replace(/^(\s*)[a-z]+(?= "| ·|$)/gm, "$1").replace(/\] [a-z]+ /g, "] ")],
  ["indentation", (t) => t.replace(/^ +/gm, "")],
  ["separators (` · `, ` | `)", (t) => t.replace(/ [·|] /g, " ")],
  ["states and cues", (t) =>
    t.replace(
      / (collapsed|expanded|selected|checked|disabled|focused|required|readonly|multiple|listener|pointer|focusable|hover|scrollable|editable|\*new)\b/g,
      "",
    )],
  ["summary lines (`… n more`)", (t) => t.split("\n").filter((l) => !/^\s*… /.test(l)).join("\n")],
];

/**
 * Where the engine's tokens go over all real pages: for each line kind, the
 * tokens the text loses when that kind alone is taken out.
 *
 * @returns kind, tokens and share of the engine's total
 */
export function tokenShares(): { kind: string; tokens: number; share: number }[] {
  let total = 0;
  const saved = new Map<string, number>();
  for (const text of lastTexts.values()) {
    const all = encode(text).length;
    total += all;
    for (const [kind, cut] of KINDS) {
      saved.set(kind, (saved.get(kind) ?? 0) + all - encode(cut(text)).length);
    }
  }
  return KINDS.map(([kind]) => ({
    kind,
    tokens: saved.get(kind) ?? 0,
    share: round((saved.get(kind) ?? 0) / Math.max(1, total)),
  }));
}

/** The summary figures of a set of rows. */
export interface RealSummary {
  /** Pages measured. */
  pages: number;
  /** Engine tokens over snapshot tokens, summed over the pages. */
  tokensRatio: number;
  /** The same without the engine's header lines and ids. */
  tokensRatioBare: number;
  /** The same over the pages where the snapshot keeps at least 90% of the content. */
  tokensRatioComparable: number;
  /** How many pages that is. */
  comparablePages: number;
  /** Median over pages of the per-page token ratio. */
  tokensRatioMedianPage: number;
  /** Mean content kept, engine and snapshot. */
  kept: number;
  /** Mean content kept by the snapshot. */
  ariaKept: number;
  /** Pages where the engine keeps less than the snapshot. */
  keptBelow: number;
  /** Median over pages of the engine's latency over the snapshot's. */
  latencyRatioMedianPage: number;
  /** Summed engine milliseconds over summed snapshot milliseconds. */
  latencyRatioTotal: number;
}

/**
 * Sums up rows.
 *
 * @param rows the pages' figures
 * @returns the summary
 */
export function summarise(rows: RealPageRow[]): RealSummary {
  const sum = (f: (r: RealPageRow) => number, of = rows) => of.reduce((n, r) => n + f(r), 0);
  const comparable = rows.filter((r) => r.ariaKept >= 0.9);
  return {
    pages: rows.length,
    tokensRatio: round(sum((r) => r.tokens) / sum((r) => r.ariaTokens)),
    tokensRatioBare: round(sum((r) => r.bareTokens) / sum((r) => r.ariaTokens)),
    tokensRatioComparable: round(
      sum((r) => r.tokens, comparable) / sum((r) => r.ariaTokens, comparable),
    ),
    comparablePages: comparable.length,
    tokensRatioMedianPage: round(p50(rows.map((r) => r.tokens / r.ariaTokens))),
    kept: round(sum((r) => r.kept) / rows.length),
    ariaKept: round(sum((r) => r.ariaKept) / rows.length),
    keptBelow: rows.filter((r) => r.kept < r.ariaKept).length,
    latencyRatioMedianPage: round(p50(rows.map((r) => r.ms / r.ariaMs))),
    latencyRatioTotal: round(sum((r) => r.ms) / sum((r) => r.ariaMs)),
  };
}

/** What {@linkcode realReport} reports. */
export interface RealReportInput {
  /** The quiet pass's rows and summary. */
  rows: RealPageRow[];
  /** Their summary. */
  summary: RealSummary;
  /** Interleaved rounds per page. */
  runs: number;
  /** Where the tokens went, from {@linkcode tokenShares}. */
  shares: { kind: string; tokens: number; share: number }[];
  /** The pass beside CPU burners, when it ran. */
  stressed?: { rows: RealPageRow[]; summary: RealSummary; burners: number } | undefined;
}

/**
 * The real pages' section of the benchmark's markdown report.
 *
 * @param input the passes' figures
 * @returns the section's lines
 */
export function realReport(input: RealReportInput): string[] {
  const { rows: real, summary: realSummary, runs: REAL_RUNS, shares, stressed } = input;
  const pct = (n: number) => `${Math.round(n * 1000) / 10}%`;
  const q = realSummary, st = stressed?.summary;
  const byPath = new Map(stressed?.rows.map((r) => [r.path, r]) ?? []);
  return [
    "## Real pages: tokens, content kept and latency against ariaSnapshot",
    "",
    `The ${q.pages} pages of the real-app suite (\`fixtures/apps\`: framework builds and component libraries from npm), each observed whole by this engine and snapshotted by \`locator('body').ariaSnapshot()\` in tabs of their own (the engine's in a browser context of its own, as an episode starts: ids from 1), ${REAL_RUNS} interleaved runs after a warm-up. Content kept: the words of the page's visible text (the suite's ground-truth script, frames included) found in each text. ${
      st
        ? `Then the same pages again beside ${
          stressed!.burners
        } CPU burners (one busy process per core, what \`WEBSERV_STRESS=1\` runs beside the tests).`
        : "The loaded pass was skipped (`--no-stress`)."
    }`,
    "",
    "| figure | target | quiet | beside CPU burners |",
    "| --- | --- | --- | --- |",
    `| tokens vs ariaSnapshot, summed over pages | ≤ 60% | ${pct(q.tokensRatio)} | |`,
    `| the same without the header lines and ids (which ariaSnapshot does not carry) | | ${
      pct(q.tokensRatioBare)
    } | |`,
    `| the same, pages where ariaSnapshot keeps ≥ 90% of the text (${q.comparablePages}) | | ${
      pct(q.tokensRatioComparable)
    } | |`,
    `| tokens vs ariaSnapshot, median page | | ${pct(q.tokensRatioMedianPage)} | |`,
    `| content kept, mean over pages (ariaSnapshot's) | ≥ ariaSnapshot's | ${pct(q.kept)} (${
      pct(q.ariaKept)
    }); below on ${q.keptBelow} pages | |`,
    `| latency vs ariaSnapshot, median page | | ${pct(q.latencyRatioMedianPage)} | ${
      st ? pct(st.latencyRatioMedianPage) : "not run"
    } |`,
    `| latency vs ariaSnapshot, summed over pages | | ${pct(q.latencyRatioTotal)} | ${
      st ? pct(st.latencyRatioTotal) : "not run"
    } |`,
    "",
    "Where the engine's tokens go, summed over the pages: what the text loses when one kind of thing alone is taken out (kinds overlap: a quote belongs to a name, a role word to an element line).",
    "",
    "| kind | tokens | share |",
    "| --- | --- | --- |",
    ...shares.map((s) => `| ${s.kind} | ${s.tokens} | ${pct(s.share)} |`),
    "",
    "| page | tokens | aria tokens | kept | aria kept | ms | aria ms | ms loaded | aria ms loaded |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...real.map((r) => {
      const l = byPath.get(r.path);
      return `| ${r.path} | ${r.tokens} | ${r.ariaTokens} | ${pct(r.kept)} | ${
        pct(r.ariaKept)
      } | ${r.ms} | ${r.ariaMs} | ${l?.ms ?? ""} | ${l?.ariaMs ?? ""} |`;
    }),
    "",
  ];
}
