/**
 * Observation benchmark: this engine (whole page and viewport) against the
 * CDP accessibility tree flattened the way BrowserGym does, a flattened
 * `DOMSnapshot.captureSnapshot`, and Playwright's `ariaSnapshot()`, in one
 * run against one Chromium. Reports p50 latency, o200k_base tokens and, on
 * `fixtures/pages`, recall of must-see elements. On the real-app suite's
 * pages (`_observe_real.ts`): tokens, content kept and latency against
 * `ariaSnapshot()`, the latency measured quiet and again beside CPU burners
 * (one per core, as `WEBSERV_STRESS=1` runs the tests), so that a loaded
 * machine's ratio is known.
 *
 * Writes `bench/results/observe.json` and `bench/results/observe.md`.
 *
 * Run: `deno task bench:observe` (`--quick` for fewer runs, `--no-stress` to
 * skip the loaded pass).
 *
 * @module
 */
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { Browser, Observer } from "../engine/mod.ts";
import type { Observation } from "../mod.ts";
import { FIXTURE_PAGES, type FixturePage, servePages } from "../fixtures/pages/mod.ts";
import { generatePage } from "./_generated_pages.ts";
import { openPlaywright, p50 } from "./_harness.ts";
import { serveApps, truthScripts } from "../fixtures/apps/mod.ts";
import { startBurners } from "../tools/stress.ts";
import {
  measureRealPages,
  type RealPageRow,
  realReport,
  type RealSummary,
  summarise,
  tokenShares,
} from "./_observe_real.ts";
import { browserInternals, newContext } from "../engine/browser/browser.ts";

const QUICK = Deno.args.includes("--quick");
const LOAD_BEFORE = Deno.loadavg();
const SIZES = [500, 2000, 8000, 32000];
const RUNS: Record<number, number> = QUICK
  ? { 500: 3, 2000: 3, 8000: 3, 32000: 1 }
  : { 500: 9, 2000: 7, 8000: 5, 32000: 3 };

type Method = "engine" | "engine-viewport" | "axtree" | "domsnapshot" | "aria-snapshot";
const METHODS: Method[] = ["engine", "engine-viewport", "axtree", "domsnapshot", "aria-snapshot"];

interface AxNode {
  nodeId: string;
  ignored: boolean;
  role?: { value?: unknown };
  name?: { value?: unknown };
  value?: { value?: unknown };
  properties?: { name: string; value: { value?: unknown } }[];
  childIds?: string[];
  backendDOMNodeId?: number;
}

const AX_PROPERTIES = new Set([
  "focused",
  "checked",
  "expanded",
  "selected",
  "disabled",
  "required",
  "readonly",
  "pressed",
  "level",
  "valuemin",
  "valuemax",
  "valuetext",
  "multiselectable",
]);

/**
 * Flattens `Accessibility.getFullAXTree` the way BrowserGym's
 * `flatten_axtree_to_str` does: one line per kept node, tab-indented,
 * `[id] role 'name'` plus properties; ignored and unnamed generic nodes
 * dropped (their children kept), static text repeating the parent's name
 * dropped.
 */
function flattenAxTree(nodes: AxNode[]): string {
  const byId = new Map(nodes.map((node) => [node.nodeId, node]));
  const lines: string[] = [];
  const visit = (node: AxNode, depth: number, parentName: string): void => {
    const role = String(node.role?.value ?? "");
    if (role === "InlineTextBox") return;
    const name = String(node.name?.value ?? "").trim();
    let skip = node.ignored || role === "none" || role === "LineBreak" ||
      ((role === "generic" || role === "group") && !name);
    if (role === "StaticText" && parentName.includes(name)) skip = true;
    if (!skip) {
      let line = `${"\t".repeat(depth)}[${node.backendDOMNodeId ?? node.nodeId}] ${role} '${name}'`;
      if (node.value?.value !== undefined && node.value.value !== "") {
        line += `, value='${String(node.value.value)}'`;
      }
      for (const property of node.properties ?? []) {
        if (AX_PROPERTIES.has(property.name)) {
          line += `, ${property.name}=${String(property.value.value)}`;
        }
      }
      lines.push(line);
    }
    for (const id of node.childIds ?? []) {
      const child = byId.get(id);
      if (child) visit(child, skip ? depth : depth + 1, skip ? parentName : name);
    }
  };
  if (nodes[0]) visit(nodes[0], 0, "");
  return lines.join("\n");
}

const KEPT_ATTRIBUTES = new Set([
  "id",
  "href",
  "role",
  "type",
  "name",
  "value",
  "placeholder",
  "alt",
  "title",
  "aria-label",
]);

interface Snapshot {
  documents: {
    nodes: {
      nodeType?: number[];
      nodeName?: number[];
      nodeValue?: number[];
      parentIndex?: number[];
      attributes?: number[][];
    };
  }[];
  strings: string[];
}

/** Flattens a DOM snapshot into pruned, indented HTML-like text (tags, key attributes, text). */
function flattenSnapshot(snapshot: Snapshot): string {
  const lines: string[] = [];
  for (const document of snapshot.documents) {
    const { nodeType = [], nodeName = [], nodeValue = [], parentIndex = [], attributes = [] } =
      document.nodes;
    const depth: number[] = [];
    const skipped: boolean[] = [];
    for (let i = 0; i < nodeType.length; i++) {
      const parent = parentIndex[i] ?? -1;
      depth[i] = parent >= 0 ? (depth[parent] ?? 0) + 1 : 0;
      const name = snapshot.strings[nodeName[i] ?? -1] ?? "";
      skipped[i] = (parent >= 0 && skipped[parent]) || name === "SCRIPT" || name === "STYLE" ||
        name === "HEAD";
      if (skipped[i]) continue;
      const pad = " ".repeat(depth[i]!);
      if (nodeType[i] === 1) {
        const attrs = attributes[i] ?? [];
        let tag = `<${name.toLowerCase()}`;
        for (let a = 0; a + 1 < attrs.length; a += 2) {
          const key = snapshot.strings[attrs[a]!] ?? "";
          if (KEPT_ATTRIBUTES.has(key)) tag += ` ${key}="${snapshot.strings[attrs[a + 1]!] ?? ""}"`;
        }
        lines.push(`${pad}${tag}>`);
      } else if (nodeType[i] === 3) {
        const text = (snapshot.strings[nodeValue[i] ?? -1] ?? "").trim();
        if (text) lines.push(pad + text);
      }
    }
  }
  return lines.join("\n");
}

function expectedNames(page: FixturePage): string[] {
  const sources = [page.html, ...Object.values(page.extra ?? {})].join("\n");
  const names = [...sources.matchAll(/data-expect="see" data-name="([^"]+)"/g)].map((m) => m[1]!);
  for (const match of sources.matchAll(/dataset\.name = "([^"]+)"/g)) names.push(match[1]!);
  return names;
}

// ---------------------------------------------------------------- setup

const generated = new Map<number, { html: string; elements: number }>();
for (const size of SIZES) generated.set(size, generatePage(size));
const extra: Record<string, string> = {};
for (const [size, page] of generated) extra[`/gen/${size}`] = page.html;
await using server = servePages(extra);
await using browser = await Browser.launch({ args: ["--window-size=1280,800"] });
const context = await newContext(browser);
const observer = Observer.attach(context);
const page = await context.newPage();
// The CDP methods run in a tab of their own, so that the accessibility mode
// `getFullAXTree` switches on stays out of the tab this engine observes.
const cdpContext = await newContext(browser);
const cdpPage = await cdpContext.newPage();
for (const tab of [page, cdpPage]) {
  await tab.session.send("Emulation.setDeviceMetricsOverride", {
    width: 1280,
    height: 800,
    deviceScaleFactor: 1,
    mobile: false,
  });
}
const playwright = await openPlaywright(browser, { width: 1280, height: 800 });
const pwPage = playwright.page;

async function navigate(url: string): Promise<void> {
  for (const tab of [page, cdpPage]) {
    const loaded = tab.session.waitForEvent("Page.loadEventFired", { timeoutMs: 60_000 });
    await tab.session.send("Page.navigate", { url });
    await loaded;
    await tab.session.send("Runtime.evaluate", {
      expression: "new Promise((resolve) => setTimeout(resolve, 20))",
      awaitPromise: true,
    });
  }
  await pwPage.goto(url, { waitUntil: "load", timeout: 60_000 });
  await pwPage.waitForTimeout(20);
}

let lastObservation: Observation | undefined;
async function run(method: Method): Promise<string> {
  switch (method) {
    case "engine":
      lastObservation = await observer.observe(page);
      return lastObservation.text;
    case "engine-viewport":
      return (await observer.observe(page, { mode: "viewport" })).text;
    case "axtree": {
      const { nodes } = await cdpPage.session.send("Accessibility.getFullAXTree", {}, {
        timeoutMs: 120_000,
      });
      return flattenAxTree(nodes as unknown as AxNode[]);
    }
    case "domsnapshot": {
      const snapshot = await cdpPage.session.send("DOMSnapshot.captureSnapshot", {
        computedStyles: [],
      }, { timeoutMs: 120_000 });
      return flattenSnapshot(snapshot as unknown as Snapshot);
    }
    case "aria-snapshot":
      return await pwPage.locator("body").ariaSnapshot({ timeout: 120_000 });
  }
}

/**
 * Times every method on the current page. Runs are interleaved (one run of
 * each method per round, the order rotating) so that load from elsewhere on
 * the machine falls on all methods alike.
 */
async function measureAll(
  runs: number,
): Promise<Record<Method, { ms: number; minMs: number; text: string }>> {
  const times = new Map<Method, number[]>();
  const texts = new Map<Method, string>();
  for (const method of METHODS) {
    texts.set(method, await run(method)); // warm-up
    times.set(method, []);
  }
  for (let round = 0; round < runs; round++) {
    for (let i = 0; i < METHODS.length; i++) {
      const method = METHODS[(i + round) % METHODS.length]!;
      const start = performance.now();
      texts.set(method, await run(method));
      times.get(method)!.push(performance.now() - start);
    }
  }
  const out = {} as Record<Method, { ms: number; minMs: number; text: string }>;
  for (const method of METHODS) {
    const all = times.get(method)!;
    out[method] = {
      ms: Math.round(p50(all) * 10) / 10,
      minMs: Math.round(Math.min(...all) * 10) / 10,
      text: texts.get(method)!,
    };
  }
  return out;
}

interface SizeResult {
  target: number;
  elements: number;
  methods: Record<string, { p50Ms: number; minMs: number; tokens: number }>;
  enginePageMs: number;
}

// ---------------------------------------------------------------- generated pages

const sizeResults: SizeResult[] = [];
for (const size of SIZES) {
  const url = server.url(`/gen/${size}`);
  await navigate(url);
  const methods: SizeResult["methods"] = {};
  const measured = await measureAll(RUNS[size] ?? 3);
  for (const method of METHODS) {
    const { ms, minMs, text } = measured[method];
    methods[method] = { p50Ms: ms, minMs, tokens: encode(text).length };
    console.log(`${size}\t${method}\t${ms} ms\t${methods[method].tokens} tokens`);
  }
  lastObservation = await observer.observe(page);
  sizeResults.push({
    target: size,
    elements: generated.get(size)!.elements,
    methods,
    enginePageMs: lastObservation?.timing.pageMs ?? NaN,
  });
}

// ---------------------------------------------------------------- fixture pages

interface RecallResult {
  expected: number;
  found: Record<string, number>;
  engineIds: number;
  falseIds: number;
  tokens: Record<string, number>;
}
const recall: Record<string, RecallResult> = {};
for (const fixture of FIXTURE_PAGES) {
  await navigate(server.url(fixture.path));
  const expected = expectedNames(fixture);
  const found: Record<string, number> = {};
  const tokens: Record<string, number> = {};
  for (const method of METHODS) {
    const text = await run(method);
    tokens[method] = encode(text).length;
    found[method] = expected.filter((name) => text.includes(name)).length;
  }
  const observation = await observer.observe(page);
  let engineIds = 0, falseIds = 0;
  const names: string[] = [];
  for (const el of observation.elements) {
    const handle = await observer.resolve(el.id);
    if (!handle) continue;
    const { result } = await handle.session.send("Runtime.callFunctionOn", {
      objectId: handle.objectId,
      functionDeclaration: `function() {
        let hidden = false;
        for (let n = this; n; n = n.parentElement || (n.getRootNode() && n.getRootNode().host) || null) {
          if (n.dataset && n.dataset.expect === "hide") hidden = true;
        }
        return [this.dataset ? this.dataset.name || "" : "", hidden];
      }`,
      returnByValue: true,
    });
    const [name, hidden] = result.value as [string, boolean];
    if (hidden) falseIds++;
    if (name) names.push(name);
  }
  engineIds = expected.filter((name) => names.includes(name)).length;
  recall[fixture.path] = { expected: expected.length, found, engineIds, falseIds, tokens };
}

// ---------------------------------------------------------------- real pages

await using apps = await serveApps();
// The real pages are observed in a context of their own, as an agent's
// episode starts: ids are never reused in a context, so after the 32k-element
// generated pages above they would run to five digits (a token more each)
// that no episode on these pages shows.
const realContext = await newContext(browser);
const realObserver = Observer.attach(realContext);
const realPage = await realContext.newPage();
await realPage.session.send("Emulation.setDeviceMetricsOverride", {
  width: 1280,
  height: 800,
  deviceScaleFactor: 1,
  mobile: false,
});
const realSetup = {
  observer: realObserver,
  page: realPage,
  pwPage,
  url: (path: string) => apps.url(path),
  truth: (await truthScripts()).truth,
};
const REAL_RUNS = QUICK ? 2 : 5;
const real = await measureRealPages(realSetup, REAL_RUNS);
const shares = tokenShares();
const realSummary = summarise(real);
console.log("real pages, quiet", realSummary);
let stressed: { rows: RealPageRow[]; summary: RealSummary; burners: number } | undefined;
if (!Deno.args.includes("--no-stress")) {
  const count = navigator.hardwareConcurrency || 2;
  const burners = startBurners(count, 30 * 60_000);
  try {
    const rows = await measureRealPages(realSetup, REAL_RUNS);
    stressed = { rows, summary: summarise(rows), burners: count };
  } finally {
    await burners.stop();
  }
  console.log("real pages, stressed", stressed.summary);
}

await playwright.close();

// ---------------------------------------------------------------- report

const totals = { expected: 0, engineIds: 0, falseIds: 0, found: {} as Record<string, number> };
for (const result of Object.values(recall)) {
  totals.expected += result.expected;
  totals.engineIds += result.engineIds;
  totals.falseIds += result.falseIds;
  for (const [method, n] of Object.entries(result.found)) {
    totals.found[method] = (totals.found[method] ?? 0) + n;
  }
}
const version = await browserInternals(browser).version();
const at8k = sizeResults.find((r) => r.target === 8000)!;
const ratio = (a: number, b: number) => Math.round((a / b) * 10) / 10;
const targets = {
  speedupVsAriaSnapshot: ratio(at8k.methods["aria-snapshot"]!.p50Ms, at8k.methods.engine!.p50Ms),
  speedupVsAxTree: ratio(at8k.methods.axtree!.p50Ms, at8k.methods.engine!.p50Ms),
  speedupVsAriaSnapshotBestRun: ratio(
    at8k.methods["aria-snapshot"]!.minMs,
    at8k.methods.engine!.minMs,
  ),
  speedupVsAxTreeBestRun: ratio(at8k.methods.axtree!.minMs, at8k.methods.engine!.minMs),
  tokensVsAriaSnapshot: Math.round(
    (at8k.methods.engine!.tokens / at8k.methods["aria-snapshot"]!.tokens) * 1000,
  ) / 10,
  recall: Math.round((totals.engineIds / totals.expected) * 1000) / 10,
  falseIds: totals.falseIds,
};
const report = {
  date: new Date().toISOString(),
  browser: version.product,
  quick: QUICK,
  loadAverage: { before: LOAD_BEFORE, after: Deno.loadavg() },
  runs: RUNS,
  sizes: sizeResults,
  fixtures: recall,
  totals,
  targets,
  real: { runs: REAL_RUNS, summary: realSummary, rows: real, tokenShares: shares, stressed },
};
const dir = new URL("./results/", import.meta.url);
await Deno.mkdir(dir, { recursive: true });
await Deno.writeTextFile(new URL("observe.json", dir), JSON.stringify(report, null, 2) + "\n");

const md: string[] = [
  "# Observation benchmark",
  "",
  `${report.date}, ${report.browser}, one Chromium, viewport 1280×800, p50 of ${
    Object.entries(RUNS).map(([k, v]) => `${v} runs at ${k}`).join(", ")
  } after one warm-up, runs of all methods interleaved. Tokens: o200k_base. Generated by \`deno task bench:observe\`.`,
  "",
  `Load average (1, 5, 15 min) on this 2-core machine: ${
    report.loadAverage.before.map((n) => n.toFixed(1)).join(", ")
  } before, ${report.loadAverage.after.map((n) => n.toFixed(1)).join(", ")} after${
    Math.max(...report.loadAverage.before, ...report.loadAverage.after) > 2
      ? " (the machine was shared with other work)"
      : ""
  }. Latency figures are wall-clock and move with load; the best run of each method is given beside the p50.`,
  "",
  "## Targets at 8k elements",
  "",
  "| target | goal | measured |",
  "| --- | --- | --- |",
  `| whole page vs Playwright ariaSnapshot | ≥ 20× faster | ${targets.speedupVsAriaSnapshot}× |`,
  `| whole page vs CDP accessibility tree | ≥ 40× faster | ${targets.speedupVsAxTree}× |`,
  `| the same two, best run of each | | ${targets.speedupVsAriaSnapshotBestRun}×, ${targets.speedupVsAxTreeBestRun}× |`,
  `| tokens vs ariaSnapshot | ≤ 35% | ${targets.tokensVsAriaSnapshot}% |`,
  `| recall of must-see elements on fixtures/pages (an id each) | 100% | ${targets.recall}% (${totals.engineIds}/${totals.expected}) |`,
  `| ids on must-not-see (vetoed) elements | 0 | ${targets.falseIds} |`,
  "",
  ...realReport({ rows: real, summary: realSummary, runs: REAL_RUNS, shares, stressed }),
  "## Generated pages: p50 latency (ms) and tokens",
  "",
  `| elements | ${METHODS.map((m) => `${m} ms`).join(" | ")} | ${
    METHODS.map((m) => `${m} tokens`).join(" | ")
  } |`,
  `| --- | ${METHODS.map(() => "---").join(" | ")} | ${METHODS.map(() => "---").join(" | ")} |`,
  ...sizeResults.map((r) =>
    `| ${r.elements} | ${METHODS.map((m) => r.methods[m]!.p50Ms).join(" | ")} | ${
      METHODS.map((m) => r.methods[m]!.tokens).join(" | ")
    } |`
  ),
  "",
  "Best run (ms):",
  "",
  `| elements | ${METHODS.join(" | ")} |`,
  `| --- | ${METHODS.map(() => "---").join(" | ")} |`,
  ...sizeResults.map((r) =>
    `| ${r.elements} | ${METHODS.map((m) => r.methods[m]!.minMs).join(" | ")} |`
  ),
  "",
  "Each tool runs in a tab of its own on the same Chromium: this engine in one, the two CDP methods",
  "in a second, Playwright in a third.",
  "",
  "`engine` includes every CDP round trip, the in-page distillation, the transfer and the text",
  "formatting; `axtree` is `Accessibility.getFullAXTree` plus a BrowserGym-style flattening;",
  "`domsnapshot` is `DOMSnapshot.captureSnapshot` flattened to pruned HTML-like text;",
  "`aria-snapshot` is playwright-core's `locator('body').ariaSnapshot()` over `connectOverCDP`.",
  "",
  "## fixtures/pages: recall of must-see elements",
  "",
  `Recall by name in the output for every method (${totals.expected} must-see elements on ${FIXTURE_PAGES.length} pages); for this engine also with an id on the element itself, and ids on must-not-see elements.`,
  "",
  `| method | names found | recall |`,
  `| --- | --- | --- |`,
  ...METHODS.map((m) =>
    `| ${m} | ${totals.found[m] ?? 0} | ${
      Math.round(((totals.found[m] ?? 0) / totals.expected) * 1000) / 10
    }% |`
  ),
  `| engine, id on the element | ${totals.engineIds} | ${targets.recall}% |`,
  "",
  "| page | must-see | engine ids | false ids | " + METHODS.map((m) => `${m} names`).join(" | ") +
  " |",
  "| --- | --- | --- | --- | " + METHODS.map(() => "---").join(" | ") + " |",
  ...Object.entries(recall).map(([path, r]) =>
    `| ${path} | ${r.expected} | ${r.engineIds} | ${r.falseIds} | ${
      METHODS.map((m) => r.found[m]).join(" | ")
    } |`
  ),
  "",
];
await Deno.writeTextFile(new URL("observe.md", dir), md.join("\n"));
console.log(md.slice(0, 24).join("\n"));
await cdpContext.close();
await realContext.close();
await context.close();
