/**
 * Real-app benchmark: on every page of `fixtures/apps` (real framework
 * builds from npm), this engine's whole-page observation against
 * Playwright's `ariaSnapshot()` (the default snapshot, of the top document
 * only and without references) and its AI snapshot (`ariaSnapshot({ mode:
 * "ai" })`: element references and iframes, what Playwright hands agents),
 * each in a tab of its own on one Chromium, runs interleaved; then the
 * scripted-agent tasks, 10 seeds each.
 *
 * Per page:
 * - **recall**: the ground-truth controls (computed by the page's truth
 *   script, `fixtures/apps/truth.ts`, in the main world) that have an id in
 *   the observation. An engine id matches a control when its element (found
 *   by backend node id: the id is resolved with `Observer.resolve`, described
 *   with `DOM.describeNode`, re-resolved in the main world) is the control
 *   itself, one of its labels, an ancestor holding that one control and no
 *   other, or a descendant of it;
 *   A control left out of the text by a summary line of repeated chrome (a
 *   link list, tag cloud or footer outside the main content, "… 35 more a
 *   below …: observe with summariseAfter 0") counts as listed on request when
 *   an observation with `summariseAfter: 0` gives it an id; it is counted
 *   apart (`summarised`) and reported, and `recallInText` leaves it out;
 * - **false ids**: ids whose element matches no control that way (for
 *   instance a container holding several controls); an id on a scroll
 *   container (what the `scroll` action takes) is counted apart, as neither;
 * - **content kept**: of the page's visible text words (the truth script's
 *   text, lower-cased runs of letters and digits, counted with
 *   multiplicity), the fraction found in the observation text; the same for
 *   the text of either snapshot;
 * - **tokens** (o200k_base) and **latency** (median of the interleaved runs)
 *   against both snapshots.
 *
 * Writes `bench/results/apps.json` and `bench/results/apps.md`.
 *
 * Run: `deno task bench:apps` (`--quick` for 2 runs and 2 seeds; `--only=/path` for one
 * page and its tasks, replacing them in the committed results; `--tasks-only` and `--seeds=N`
 * to try the solvers, printing only).
 *
 * @module
 */
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { Browser, type CdpSession, Env, type EnvObservation } from "../engine/mod.ts";
import {
  APP_PAGES,
  APP_TASKS,
  type AppPage,
  type Classified,
  serveApps,
  type TaskAgent,
  type Truth,
  truthScripts,
} from "../fixtures/apps/mod.ts";
import { interleave, openPlaywright } from "./_harness.ts";
import {
  appsMarkdown,
  type ClickReceipts,
  type Miss,
  type PageRow,
  summarise,
  type TaskRow,
} from "./_apps_report.ts";
import { logFailure } from "../engine/log.ts";
import { envInternals } from "../engine/env.ts";
import { browserInternals } from "../engine/browser/browser.ts";

const QUICK = Deno.args.includes("--quick");
const ONLY = Deno.args.find((a) => a.startsWith("--only="))?.slice("--only=".length);
const NO_PAGES = Deno.args.includes("--tasks-only");
const RUNS = QUICK ? 2 : 5;
const SEEDS = Number(Deno.args.find((a) => a.startsWith("--seeds="))?.slice(8) ?? (QUICK ? 2 : 10));
const VIEWPORT = { width: 1280, height: 800 };
const LOAD_BEFORE = Deno.loadavg();
const GROUP = "apps-bench";

function words(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return counts;
}

/** The fraction of the truth's words (with multiplicity) that the text holds. */
function kept(truth: Map<string, number>, text: string): number {
  const have = words(text);
  let total = 0, found = 0;
  for (const [word, n] of truth) {
    total += n;
    found += Math.min(n, have.get(word) ?? 0);
  }
  return total === 0 ? 1 : found / total;
}

/**
 * The observation text without what the default snapshot has no counterpart
 * for: the header line (title, URL, scroll), the ids and the links' targets.
 */
function bareText(text: string): string {
  return text.split("\n").slice(1).join("\n").replace(/\[\d+\] /g, "").replace(/ → \S+/g, "");
}

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;

// ---------------------------------------------------------------- setup

const { truth: TRUTH_SCRIPT, classify: CLASSIFY_FUNCTION } = await truthScripts();
await using server = await serveApps();
await using browser = await Browser.launch({ args: ["--window-size=1280,800"] });
const env = await Env.create(browser, {
  startUrl: "about:blank",
  onlyOrigins: [server.origin, server.otherOrigin],
  allowUrl: (url) => url.origin === server.origin || url.origin === server.otherOrigin,
});
const playwright = await openPlaywright(browser, VIEWPORT);
const pwPage = playwright.page;

function enginePage() {
  const page = envInternals(env).actor.page;
  if (!page) throw new Error("Cannot run the benchmark: the env has no open tab");
  return page;
}

async function evaluate(session: CdpSession, expression: string): Promise<unknown> {
  const { result, exceptionDetails } = await session.send("Runtime.evaluate", {
    expression,
    returnByValue: true,
    awaitPromise: true,
  }, { timeoutMs: 60_000 });
  if (exceptionDetails) {
    throw new Error(
      `Cannot evaluate ${JSON.stringify(expression.slice(0, 60))}: ${
        exceptionDetails.exception?.description ?? exceptionDetails.text
      }`,
    );
  }
  return result.value;
}

const WAIT_READY = `new Promise((resolve, reject) => {
  const start = Date.now();
  (function poll() {
    if (window.__appReady) resolve(true);
    else if (Date.now() - start > 15000) reject(new Error("page not ready"));
    else setTimeout(poll, 10);
  })();
})`;

async function openInEngine(url: string): Promise<void> {
  await env.step({ action: "goto", url });
  const page = enginePage();
  await page.session.send("Emulation.setDeviceMetricsOverride", {
    ...VIEWPORT,
    deviceScaleFactor: 1,
    mobile: false,
  });
  await evaluate(page.session, WAIT_READY);
}

async function openBoth(url: string): Promise<void> {
  await openInEngine(url);
  await pwPage.goto(url, { waitUntil: "load", timeout: 60_000 });
  await pwPage.waitForFunction("window.__appReady === true", undefined, { timeout: 15_000 });
}

/** Runs the truth script in the top document and in every out-of-process iframe. */
async function truthOf(): Promise<Map<CdpSession, Truth>> {
  const page = enginePage();
  const truths = new Map<CdpSession, Truth>();
  for (const session of [page.session, ...page.frameSessions]) {
    const json = await evaluate(session, TRUTH_SCRIPT);
    truths.set(session, JSON.parse(String(json)) as Truth);
  }
  return truths;
}

async function classifyId(id: number): Promise<{ session: CdpSession; c: Classified } | undefined> {
  const handle = await envInternals(env).observer.resolve(id);
  if (!handle) return undefined;
  const { session } = handle;
  const { node } = await session.send("DOM.describeNode", { objectId: handle.objectId });
  const { object } = await session.send("DOM.resolveNode", {
    backendNodeId: node.backendNodeId,
    objectGroup: GROUP,
  });
  if (!object.objectId) return undefined;
  const { result } = await session.send("Runtime.callFunctionOn", {
    objectId: object.objectId,
    functionDeclaration: CLASSIFY_FUNCTION,
    returnByValue: true,
  });
  return { session, c: result.value as Classified };
}

// ---------------------------------------------------------------- pages

const pageRows: PageRow[] = [];
const pages = NO_PAGES ? [] : APP_PAGES.filter((p) => !ONLY || p.path === ONLY);

async function measurePage(page: AppPage): Promise<PageRow> {
  const url = server.url(page.path);
  await openBoth(url);
  const truths = await truthOf();
  type Method = "engine" | "aria" | "ariaAi" | "floor";
  const methods: Method[] = ["engine", "aria", "ariaAi", "floor"];
  const timed = await interleave<Method, string>(methods, RUNS, async (method) => {
    if (method === "engine") return (await env.observe()).text;
    // One round trip to the same renderer through the env, with no work: what any call pays.
    if (method === "floor") return String(await env.evaluate("0"));
    if (method === "ariaAi") return await pwPage.ariaSnapshot({ mode: "ai", timeout: 120_000 });
    return await pwPage.locator("body").ariaSnapshot({ timeout: 120_000 });
  });
  const observation: EnvObservation = await env.observe();

  // Which truth controls got an id, and which ids are false.
  const sessions = [...truths.keys()];
  const matched = new Set<string>();
  const merged: { what: string; id: number; contains: string[] }[] = [];
  const falseIdList: string[] = [];
  let scrollers = 0;
  for (const element of observation.elements) {
    const found = await classifyId(element.id);
    if (!found) continue;
    const s = sessions.indexOf(found.session);
    const { c } = found;
    if (c.kind === "scroller") scrollers++;
    else if (c.kind !== "none") matched.add(`${s}:${c.index}`);
    else {
      falseIdList.push(
        `[${element.id}] ${element.role} ${JSON.stringify(element.name.slice(0, 50))} on ${c.what}${
          c.inside > 1 ? ` (holds ${c.inside} controls)` : ""
        }`,
      );
      if (c.inside > 1) {
        merged.push({
          what: `[${element.id}] ${element.role} ${JSON.stringify(element.name.slice(0, 40))}`,
          id: element.id,
          contains: c.contains.map((i) => `${s}:${i}`),
        });
      }
    }
  }
  // Controls left out of the text by a summary line ("… 35 more a below: … observe with
  // summariseAfter 0") are listed on request: the mode the line names gives them ids.
  const listed = new Set<string>();
  const seen = new Set(observation.elements.map((element) => element.id));
  if (observation.text.includes("summariseAfter 0")) {
    const expanded = await env.observe({ summariseAfter: 0 });
    for (const element of expanded.elements) {
      if (seen.has(element.id)) continue;
      const found = await classifyId(element.id);
      if (!found || found.c.kind === "none" || found.c.kind === "scroller") continue;
      const key = `${sessions.indexOf(found.session)}:${found.c.index}`;
      if (!matched.has(key)) listed.add(key);
    }
  }
  for (const session of sessions) {
    await session.send("Runtime.releaseObjectGroup", { objectGroup: GROUP }).catch((error) =>
      logFailure("releasing the bench's object group", error)
    );
  }
  const misses: Miss[] = [];
  const summarised: string[] = [];
  let controls = 0;
  const truthText: string[] = [];
  const vetoed: PageRow["vetoed"] = [];
  sessions.forEach((session, s) => {
    const truth = truths.get(session)!;
    truthText.push(truth.text);
    vetoed.push(...truth.vetoed);
    for (const control of truth.controls) {
      controls++;
      const key = `${s}:${control.index}`;
      if (matched.has(key)) continue;
      if (listed.has(key)) {
        summarised.push(`${control.role} ${JSON.stringify(control.name.slice(0, 50))}`);
        continue;
      }
      const container = merged.find((m) => m.contains.includes(key));
      misses.push({
        control: `${control.role} ${JSON.stringify(control.name.slice(0, 50))}${
          s > 0 ? " (out-of-process iframe)" : ""
        }${control.source === "pointer" ? " (cursor:pointer)" : ""}`,
        reason: container
          ? `no id of its own: merged into ${container.what}`
          : control.name && !observation.text.includes(control.name.slice(0, 40))
          ? "no id, and its name is not in the text (summarised or left out)"
          : "no id, though its name is in the text",
      });
    }
  });
  const truthWords = words(truthText.join("\n"));
  const row: PageRow = {
    path: page.path,
    framework: page.framework,
    patterns: page.patterns,
    controls,
    matched: controls - misses.length - summarised.length,
    summarised: summarised.length,
    summarisedList: summarised,
    recall: round(controls ? (controls - misses.length) / controls : 1),
    ids: observation.elements.length,
    falseIds: falseIdList.length,
    scrollers,
    contentKept: round(kept(truthWords, timed.engine.value)),
    contentKeptAria: round(kept(truthWords, timed.aria.value)),
    contentKeptAriaAi: round(kept(truthWords, timed.ariaAi.value)),
    tokens: {
      engine: encode(timed.engine.value).length,
      bare: encode(bareText(timed.engine.value)).length,
      aria: encode(timed.aria.value).length,
      ariaAi: encode(timed.ariaAi.value).length,
    },
    ms: {
      engine: timed.engine.ms,
      aria: timed.aria.ms,
      engineMin: timed.engine.minMs,
      ariaMin: timed.aria.minMs,
      ariaAi: timed.ariaAi.ms,
      ariaAiMin: timed.ariaAi.minMs,
      floor: timed.floor.ms,
    },
    misses,
    falseIdList,
    vetoed,
  };
  return row;
}

for (const page of pages) {
  try {
    const row = await measurePage(page);
    pageRows.push(row);
    console.log(
      `${page.path}\trecall ${row.matched}+${row.summarised}/${row.controls}\tfalse ${row.falseIds}\tkept ${row.contentKept}/${row.contentKeptAria}\ttokens ${row.tokens.engine}/${row.tokens.aria}/${row.tokens.ariaAi}\tms ${row.ms.engine}/${row.ms.aria}/${row.ms.ariaAi}`,
    );
  } catch (error) {
    console.error(`${page.path}: ${error instanceof Error ? error.message : String(error)}`);
    throw error;
  }
}
await playwright.close();

// ---------------------------------------------------------------- tasks

// Clicks verified by the bench itself, in the page, apart from the engine:
// listeners on the target (and its labels, and a hidden toggle's siblings,
// which the engine may aim at instead) record whether the press, the release
// and the click reached it, whether a page listener prevented the press's
// default, and whether the DOM changed between the press and the release.
// The record is also kept in the tab's sessionStorage, so a click that
// navigates (to a page of the same origin) is read in the next document.
const PROBE = `function (key) {
  const el = this;
  const doc = el.ownerDocument, win = doc.defaultView;
  const aims = [el, ...(el.labels || [])];
  if (el.localName === "input" && /^(checkbox|radio)$/.test(el.type)) {
    for (const s of [el.previousElementSibling, el.nextElementSibling]) if (s) aims.push(s);
  }
  const record = { down: false, up: false, click: false, prevented: false, changed: false };
  const presses = [];
  let changes = null;
  const save = () => {
    record.prevented = record.prevented || presses.some((e) => e.defaultPrevented);
    try { win.sessionStorage.setItem(key, JSON.stringify(record)); } catch {}
  };
  const close = () => {
    if (!changes) return;
    if (changes.takeRecords().length > 0) record.changed = true;
    changes.disconnect();
    changes = null;
  };
  const down = (e) => {
    record.down = true;
    presses.push(e);
    if (!changes && !record.up) {
      changes = new MutationObserver(() => { record.changed = true; save(); });
      changes.observe(doc, { subtree: true, childList: true, attributes: true, characterData: true });
    }
    save();
  };
  for (const node of aims) {
    node.addEventListener("mousedown", down, true);
    node.addEventListener("pointerdown", down, true);
    node.addEventListener("mouseup", () => { record.up = true; save(); }, true);
    node.addEventListener("pointerup", () => { record.up = true; save(); }, true);
    node.addEventListener("click", () => { record.click = true; save(); }, true);
  }
  // After the page's own press listeners (bubbling at the window): was the default prevented?
  win.addEventListener("mousedown", save, false);
  // The first release anywhere closes the window of changes the press made.
  const release = () => { close(); save(); win.removeEventListener("mouseup", release, true); };
  win.addEventListener("mouseup", release, true);
  win.__benchClick = { read: () => { close(); save(); return record; } };
  save();
}`;
const READ_PROBE = `function () {
  const probe = this.ownerDocument.defaultView.__benchClick;
  return probe ? probe.read() : null;
}`;

/** What the bench's probe read of one click. */
interface ProbeRecord {
  down: boolean;
  up: boolean;
  click: boolean;
  prevented: boolean;
  changed: boolean;
}

/** An armed probe: the target's handle, and the sessionStorage key its record is kept under. */
interface Probe {
  session: CdpSession;
  objectId: string;
  key: string;
}

let probes = 0;

/** Arms the probe on the click's target; the probe to read, or undefined. */
async function armProbe(id: number): Promise<Probe | undefined> {
  const handle = await envInternals(env).observer.resolve(id);
  if (!handle) return undefined;
  const key = `__benchClick${++probes}`;
  await handle.session.send("Runtime.callFunctionOn", {
    objectId: handle.objectId,
    functionDeclaration: PROBE,
    arguments: [{ value: key }],
  });
  return { ...handle, key };
}

/**
 * What the probe recorded, and whether the target's document was replaced
 * since (then the record comes from the tab's sessionStorage, `null` when
 * the next document is of another origin).
 */
async function readProbe(probe: Probe): Promise<{ record: ProbeRecord | null; replaced: boolean }> {
  try {
    const { result } = await probe.session.send("Runtime.callFunctionOn", {
      objectId: probe.objectId,
      functionDeclaration: READ_PROBE,
      returnByValue: true,
    });
    return { record: result.value as ProbeRecord | null, replaced: false };
  } catch {
    const stored = await evaluate(
      probe.session,
      `sessionStorage.getItem(${JSON.stringify(probe.key)})`,
    ).catch(() => null);
    return {
      record: typeof stored === "string" ? JSON.parse(stored) as ProbeRecord : null,
      replaced: true,
    };
  }
}

/**
 * How the bench verified one click reported ok: `whole` (press, release
 * and click on the target), `handled` (the press on the target, its default
 * prevented or the DOM changed between press and release), `gone` (the
 * press on the target, then its document replaced), or `unverified`.
 */
function receiptOf(read: { record: ProbeRecord | null; replaced: boolean }): keyof ClickReceipts {
  const r = read.record;
  if (!r || !r.down) return "unverified";
  if (r.up && r.click) return "whole";
  if (r.prevented || r.changed) return "handled";
  return read.replaced ? "gone" : "unverified";
}

const clicks: ClickReceipts = { whole: 0, handled: 0, gone: 0, unverified: 0 };
const agent: TaskAgent = {
  observe: () => env.observe(),
  async act(action) {
    const probe = typeof action === "object" && action !== null &&
        (action as { action?: unknown }).action === "click"
      ? await armProbe((action as { id: number }).id).catch((error) => {
        logFailure("arming the bench's click probe", error);
        return undefined;
      })
      : undefined;
    const step = await env.step(action);
    // A step that returned is a click reported ok (an action error throws).
    if (probe) clicks[receiptOf(await readProbe(probe))]++;
    return step.observation ?? await env.observe();
  },
};

const taskRows: TaskRow[] = [];
for (const task of APP_TASKS.filter((t) => !ONLY || t.page === ONLY)) {
  const row: TaskRow = {
    name: task.name,
    page: task.page,
    pattern: task.pattern,
    solved: 0,
    seeds: SEEDS,
    clicksOk: 0,
    clicksVerified: 0,
    failures: [],
  };
  clicks.whole =
    clicks.handled =
    clicks.gone =
    clicks.unverified =
      0;
  for (let seed = 0; seed < SEEDS; seed++) {
    let reason = "";
    try {
      await openInEngine(server.url(task.page));
      await task.solve(agent, seed);
      const ok = await evaluate(enginePage().session, task.check(seed));
      if (ok !== true) reason = "the page's state is not the asked one";
    } catch (error) {
      reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    }
    if (reason) row.failures.push({ seed, instruction: task.instruction(seed), reason });
    else row.solved++;
  }
  row.clicksVerified = clicks.whole + clicks.handled + clicks.gone;
  row.clicksOk = row.clicksVerified + clicks.unverified;
  row.clickReceipts = { ...clicks };
  console.log(
    `${task.name}\t${row.solved}/${row.seeds}\tclicks ${row.clicksVerified}/${row.clicksOk}`,
  );
  taskRows.push(row);
}
await env.close();

// ---------------------------------------------------------------- report

const dir = new URL("./results/", import.meta.url);
const RESULTS = new URL("apps.json", dir);
// A run of one page replaces that page's row and tasks in the committed
// results; a tasks-only run just prints.
const reruns: { path: string; date: string }[] = [];
if (ONLY !== undefined && !NO_PAGES) {
  const previous = JSON.parse(await Deno.readTextFile(RESULTS)) as {
    pages: PageRow[];
    tasks: TaskRow[];
    reruns?: { path: string; date: string }[];
  };
  const fresh = new Set(pageRows.map((r) => r.path));
  pageRows.unshift(...previous.pages.filter((r) => !fresh.has(r.path)));
  const freshTasks = new Set(taskRows.map((r) => r.name));
  taskRows.unshift(...previous.tasks.filter((r) => !freshTasks.has(r.name)));
  const order = (path: string) => APP_PAGES.findIndex((p) => p.path === path);
  pageRows.sort((a, b) => order(a.path) - order(b.path));
  const taskOrder = (name: string) => APP_TASKS.findIndex((t) => t.name === name);
  taskRows.sort((a, b) => taskOrder(a.name) - taskOrder(b.name));
  reruns.push(...(previous.reruns ?? []).filter((r) => r.path !== ONLY), {
    path: ONLY,
    date: new Date().toISOString(),
  });
}

const summary = summarise(pageRows, taskRows);
const version = await browserInternals(browser).version();
const report = {
  date: new Date().toISOString(),
  browser: version.product,
  quick: QUICK,
  runs: RUNS,
  seeds: SEEDS,
  loadAverage: { before: LOAD_BEFORE, after: Deno.loadavg() },
  notes: [
    "recall, falseIds: summed over pages; contentKept, contentKeptAria: mean over pages; tokensVsAria, latencyVsAria: median over pages of the per-page ratio",
    "latency: median of interleaved runs, whole-page env.observe() vs locator('body').ariaSnapshot() and page.ariaSnapshot({ mode: 'ai' }), each in its own tab",
    "contentKeptAriaAi, tokensVsAriaAi, latencyVsAriaAi: the same against Playwright's AI snapshot (references and iframes)",
    "tokensBareVsAria: the same as tokensVsAria for the observation text without its header line, ids and link targets (what the default snapshot has no counterpart for)",
    "floor: one env.evaluate('0') round trip to the page, interleaved with the rest; workVsAriaAi: median of (engine - floor) / (ariaAi - floor)",
    "clicks: every click the env reported ok, checked by the bench's own probe in the page (not the engine's): whole (press, release and click on the target), handled (the press on the target, its default prevented by a page listener or the DOM changed between press and release), gone (the press on the target, then its document replaced; read from sessionStorage), else no receipt; clicksVerified = whole + handled + gone",
  ],
  summary,
  reruns,
  pages: pageRows,
  tasks: taskRows,
};
await Deno.mkdir(dir, { recursive: true });
const PARTIAL = NO_PAGES;
if (!PARTIAL) await Deno.writeTextFile(RESULTS, JSON.stringify(report, null, 2) + "\n");

const md = appsMarkdown(report);
if (!PARTIAL) await Deno.writeTextFile(new URL("apps.md", dir), md);
console.log(PARTIAL ? md : md.split("\n").slice(0, 20).join("\n"));
