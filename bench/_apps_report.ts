/**
 * The real-app benchmark's rows, its summary figures and its Markdown
 * report (`bench/results/apps.md`), apart from the measuring in `apps.ts`.
 *
 * @module
 */

/** A control of the ground truth without an id, and why. */
export interface Miss {
  control: string;
  reason: string;
}

/** One page of the suite, as measured. */
export interface PageRow {
  path: string;
  framework: string;
  patterns: string[];
  controls: number;
  matched: number;
  /** Controls without an id that a summary line of repeated chrome lists on request. */
  summarised: number;
  summarisedList: string[];
  recall: number;
  ids: number;
  falseIds: number;
  scrollers: number;
  contentKept: number;
  contentKeptAria: number;
  /** Content kept by Playwright's AI snapshot (absent in rows of runs before it was measured). */
  contentKeptAriaAi?: number;
  /** `bare`: the observation without its header line, ids and link targets (absent in older rows). */
  tokens: { engine: number; aria: number; ariaAi?: number; bare?: number };
  ms: {
    engine: number;
    aria: number;
    engineMin: number;
    ariaMin: number;
    ariaAi?: number;
    ariaAiMin?: number;
    /** One round trip to the page through the env, with no work (absent in older rows). */
    floor?: number;
  };
  misses: Miss[];
  falseIdList: string[];
  vetoed: { what: string; reason: string }[];
}

/** One scripted task over its seeds. */
export interface TaskRow {
  name: string;
  page: string;
  pattern: string;
  solved: number;
  seeds: number;
  /** Click steps the env reported ok (absent in runs before the count). */
  clicksOk?: number;
  /** Of those, the ones with a receipt the bench read in the page: whole, handled or gone (see {@linkcode ClickReceipts}). */
  clicksVerified?: number;
  /** The receipts, by kind (absent in runs before they were told apart). */
  clickReceipts?: ClickReceipts;
  /** Runs before the receipts: presses taken on mousedown, counted apart from the verified ones. */
  clicksTakenOnPress?: number;
  failures: { seed: number; instruction: string; reason: string }[];
}

/**
 * How the bench verified the clicks the env reported ok, each by what its
 * own probe read in the page, apart from the engine's receipts.
 */
export interface ClickReceipts {
  /** The press, the release and the click reached the target. */
  whole: number;
  /**
   * The press reached the target and the page took it there, with no click:
   * a page listener prevented its default, or the DOM changed between the
   * press and the release (a menu opening on mousedown under a backdrop).
   */
  handled: number;
  /** The press reached the target, then its document was replaced (a navigation). */
  gone: number;
  /** Reported ok with none of these: no receipt. */
  unverified: number;
}

/** Who ran the benchmark where, and what it found. */
export interface AppsReport {
  date: string;
  browser: string;
  quick: boolean;
  runs: number;
  seeds: number;
  loadAverage: { before: number[]; after: number[] };
  notes: string[];
  summary: AppsSummary;
  reruns: { path: string; date: string }[];
  pages: PageRow[];
  tasks: TaskRow[];
}

/** The suite's figures, as `apps.json`'s `summary` holds them (ratios as fractions). */
export interface AppsSummary {
  /** Controls with an id or listed on request by a summary line, over all controls. */
  recall: number;
  /** Controls with an id in the text, over all controls. */
  recallInText: number;
  summarised: number;
  falseIds: number;
  contentKept: number;
  contentKeptAria: number;
  tokensVsAria: number;
  latencyVsAria: number;
  contentKeptAriaAi: number;
  tokensVsAriaAi: number;
  latencyVsAriaAi: number;
  pagesSlowerThanAriaAi: string[];
  /** Median over pages of bare observation tokens / default snapshot tokens. */
  tokensBareVsAria?: number;
  /** Median over pages of (engine − floor) / (AI snapshot − floor): the work beyond one round trip. */
  workVsAriaAi?: number;
  /** Median over pages of the floor / the engine's latency. */
  floorShare?: number;
  tasksSolved: number;
  tasksTotal: number;
  /** Click steps reported ok, over all tasks. */
  clicksOk?: number;
  /** Of those, the ones with a receipt the bench read in the page. */
  clicksVerified?: number;
  /** The receipts, by kind, over all tasks. */
  clickReceipts?: ClickReceipts;
  controls: number;
  controlsWithId: number;
  pagesContentBelowAria: string[];
  pagesSlowerThanAria: string[];
}

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;

function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
}

/** The median of the values. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Rows that measured Playwright's AI snapshot too. */
function withAiOf(pageRows: PageRow[]): PageRow[] {
  return pageRows.filter((r) => r.tokens.ariaAi !== undefined && r.ms.ariaAi !== undefined);
}

/** Rows with the bare token count and the round-trip floor. */
function accountedOf(pageRows: PageRow[]): PageRow[] {
  return pageRows.filter((r) => r.tokens.bare !== undefined && r.ms.floor !== undefined);
}

/** The summary figures of the rows: sums, means and medians over pages. */
export function summarise(pageRows: PageRow[], taskRows: TaskRow[]): AppsSummary {
  const totalControls = pageRows.reduce((n, r) => n + r.controls, 0);
  const totalMatched = pageRows.reduce((n, r) => n + r.matched, 0);
  const totalSummarised = pageRows.reduce((n, r) => n + (r.summarised ?? 0), 0);
  const withAi = withAiOf(pageRows);
  const accounted = accountedOf(withAi);
  return {
    recall: round((totalMatched + totalSummarised) / Math.max(1, totalControls)),
    recallInText: round(totalMatched / Math.max(1, totalControls)),
    summarised: totalSummarised,
    falseIds: pageRows.reduce((n, r) => n + r.falseIds, 0),
    contentKept: round(mean(pageRows.map((r) => r.contentKept))),
    contentKeptAria: round(mean(pageRows.map((r) => r.contentKeptAria))),
    tokensVsAria: round(median(pageRows.map((r) => r.tokens.engine / r.tokens.aria))),
    latencyVsAria: round(median(pageRows.map((r) => r.ms.engine / r.ms.aria))),
    contentKeptAriaAi: round(mean(withAi.map((r) => r.contentKeptAriaAi!))),
    tokensVsAriaAi: round(median(withAi.map((r) => r.tokens.engine / r.tokens.ariaAi!))),
    latencyVsAriaAi: round(median(withAi.map((r) => r.ms.engine / r.ms.ariaAi!))),
    pagesSlowerThanAriaAi: withAi.filter((r) => r.ms.engine > r.ms.ariaAi!).map((r) => r.path),
    ...(accounted.length
      ? {
        tokensBareVsAria: round(median(accounted.map((r) => r.tokens.bare! / r.tokens.aria))),
        workVsAriaAi: round(
          median(accounted.map((r) => (r.ms.engine - r.ms.floor!) / (r.ms.ariaAi! - r.ms.floor!))),
        ),
        floorShare: round(median(accounted.map((r) => r.ms.floor! / r.ms.engine))),
      }
      : {}),
    tasksSolved: taskRows.reduce((n, r) => n + r.solved, 0),
    tasksTotal: taskRows.reduce((n, r) => n + r.seeds, 0),
    ...(taskRows.some((r) => r.clicksOk !== undefined)
      ? {
        clicksOk: taskRows.reduce((n, r) => n + (r.clicksOk ?? 0), 0),
        clicksVerified: taskRows.reduce((n, r) => n + (r.clicksVerified ?? 0), 0),
        ...(receiptsOf(taskRows) ? { clickReceipts: receiptsOf(taskRows)! } : {}),
      }
      : {}),
    controls: totalControls,
    controlsWithId: totalMatched,
    pagesContentBelowAria: pageRows.filter((r) => r.contentKept < r.contentKeptAria).map((r) =>
      r.path
    ),
    pagesSlowerThanAria: pageRows.filter((r) => r.ms.engine > r.ms.aria).map((r) => r.path),
  };
}

/** Where the tokens and the time go: the section's lines (none for rows without the figures). */
function accountMarkdown(
  summary: AppsSummary,
  rows: PageRow[],
  pct: (n: number) => string,
): string[] {
  if (!rows.length || summary.tokensBareVsAria === undefined) return [];
  return [
    "## Where the tokens and the time go",
    "",
    `- Tokens: the default snapshot has no header line (title, URL, scroll), no ids and no link targets (the issue asks for the last two). Without them the observation takes ${
      pct(summary.tokensBareVsAria)
    } of the default snapshot's tokens on the median page, against ${
      pct(summary.tokensVsAria)
    } with them. What remains is roles, names, states and the page's text, which content kept ≥ the snapshot's forbids dropping.`,
    `- Time: one round trip to the page through the env with no work in it (\`env.evaluate("0")\`, interleaved with the rest) takes ${
      pct(summary.floorShare!)
    } of the observation's time on the median page. Beyond that round trip, the observation's work is ${
      pct(summary.workVsAriaAi!)
    } of the AI snapshot's (which pays at least one round trip too).`,
    "",
    "| page | tokens | without header, ids, targets | aria tokens | ms | round trip ms | ai ms |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map((r) =>
      `| ${r.path} | ${r.tokens.engine} | ${r.tokens.bare} | ${r.tokens.aria} | ${r.ms.engine} | ${r.ms.floor} | ${r.ms.ariaAi} |`
    ),
    "",
  ];
}

/** The Markdown report of a run. */
export function appsMarkdown(report: AppsReport): string {
  const { summary, reruns, pages: pageRows, tasks: taskRows } = report;
  const totalControls = summary.controls;
  const totalMatched = summary.controlsWithId;
  const totalSummarised = summary.summarised;
  const withAi = withAiOf(pageRows);
  const pct = (n: number) => `${Math.round(n * 1000) / 10}%`;
  const md: string[] = [
    "# Real-app benchmark",
    "",
    `${report.date}, ${report.browser}, one Chromium, viewport 1280×800. Median of ${report.runs} interleaved runs per tool after one warm-up; each tool in a tab of its own. Tokens: o200k_base. ${report.seeds} seeds per task. Generated by \`deno task bench:apps\`${
      report.quick ? " --quick" : ""
    }.`,
    "",
    `Load average (1, 5, 15 min): ${
      report.loadAverage.before.map((n) => n.toFixed(1)).join(", ")
    } before, ${
      report.loadAverage.after.map((n) => n.toFixed(1)).join(", ")
    } after, on a 2-core machine${
      Math.max(...report.loadAverage.before, ...report.loadAverage.after) > 2
        ? " shared with other work"
        : ""
    }: latencies are noisy, read the ratios.`,
    "",
    ...(reruns.length
      ? [
        `Pages measured again alone after the whole run (their rows and tasks replaced): ${
          reruns.map((r) => `${r.path} (${r.date})`).join(", ")
        }.`,
        "",
      ]
      : []),
    "## History",
    "",
    "| run | recall | false ids | content below aria | tokens vs aria | latency vs aria (slower pages) | tokens vs AI | latency vs AI (slower pages) | tasks | clicks verified | record |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    "| before the distiller and actions work (`main` at c1e8878) | 78.6% | 19 | 7 pages | 68% | 18.8% (2) | n/a | n/a | 54/140 | n/a | `apps.before.md` at 3493061 |",
    "| distiller and actions merged | 81.9% | 2 | 4 pages | 81.8% | 17.5% (1) | n/a | n/a | 127/140 | n/a | `apps.after.md` at 3493061 |",
    "| `main` at 6945e7e | 100% (90.1% in the text) | 2 | 0 pages | 80.4% | 28.3% (0) | n/a | n/a | 138/140 | n/a | `apps.md` at 6945e7e |",
    "| `main` at 42e8660 (hand-labelled datepicker arrows, the headless shell, act calls by name) | 100% (90.1% in the text) | 0 | 0 pages | 80.4% | 28.9% (1) | n/a | n/a | 140/140 | n/a | `apps.md` at 42e8660 |",
    "| `main` at e1b7ae3 (Playwright's AI snapshot measured beside) | 100% (90.1% in the text) | 0 | 0 pages | 80.4% | 34.8% (1) | 44.4% | 48.4% (0) | 140/140 | n/a | `apps.md` at e1b7ae3 |",
    "| `main` at 727499d (hit tests only under positioned boxes, same-process frames in their parent's call) | 100% (90.1% in the text) | 0 | 0 pages | 80.4% | 31.9% (1) | 44.4% | 40.6% (0) | 140/140 | n/a | `apps.md` at 727499d |",
    "| `main` at 145b5bf (the TCP transport with Nagle off, same-origin sibling frames in one call) | 100% (90.1% in the text) | 0 | 0 pages | 80.4% | 29.2% (1) | 44.4% | 38.5% (0) | 140/140 | n/a | `apps.md` at 145b5bf |",
    "| `main` at e8167bb (a no-op round trip and the text without header, ids and link targets measured beside) | 100% (90.1% in the text) | 0 | 0 pages | 80.4% | 30.9% (1) | 44.4% | 39.3% (0) | 140/140 | n/a | `apps.md` at e8167bb |",
    "| `main` at 5804ecc (a Material UI page and its three tasks added, nine component-library pages) | 100% (90.7% in the text) | 1 | 0 pages | 80.4% | 25.3% (1) | 38.6% | 37% (0) | 260/260 | 48/50 (2 taken on mousedown, counted apart) | `apps.md` at 5804ecc |",
    "| `main` at 673228f (the actions' in-page code bundled from typed page modules, one stand-in rule; every click ok with a receipt, checked by the bench's own probe) | 100% (91.5% in the text) | 0 | 1 pages | 92.5% | 26.8% (1) | 38.6% | 39.6% (0) | 430/430 | 667/667 | `apps.md` at 673228f |",
    "| `main` at 59879cb (the widget pages: pickers, sortables, a closed shadow root, uploads, rich text, icon-only controls, tasks on six; names bare in the text unless quoting is needed, no `link` before a shown target) | 99.8% (91.5% in the text) | 39 | 0 pages | 87.6% | 26.2% (1) | 36.7% | 45.7% (2) | 490/490 | 687/687 | `apps.md` at 59879cb |",
    `| this run (the truth counts hand-labelled listener-only icons, drag sources, drop lanes and zones, hover-revealed and closed-root controls; hover-revealed controls named by their words, no id on a listened host of a disabled button, glyph icons named) | ${
      pct(summary.recall)
    } (${
      pct(summary.recallInText)
    } in the text) | ${summary.falseIds} | ${summary.pagesContentBelowAria.length} pages | ${
      pct(summary.tokensVsAria)
    } | ${pct(summary.latencyVsAria)} (${summary.pagesSlowerThanAria.length}) | ${
      pct(summary.tokensVsAriaAi)
    } | ${
      pct(summary.latencyVsAriaAi)
    } (${summary.pagesSlowerThanAriaAi.length}) | ${summary.tasksSolved}/${summary.tasksTotal} | ${
      summary.clicksOk === undefined ? "n/a" : `${summary.clicksVerified}/${summary.clicksOk}`
    } | this file |`,
    "",
    "The run after the distiller and actions merged counted summarised controls as misses; every later run counts a control a summary line of chrome lists on request apart, as `summarised`. From 42e8660 the suite runs on the headless shell (`chromium-headless-shell`), which `findChrome()` now picks for headless runs; ariaSnapshot runs on the same browser. e1b7ae3 adds Playwright's AI snapshot as a second peer. 727499d hit-tests a candidate for covers only where a positioned box overlaps it, and distils same-origin iframes in their parent's call. 145b5bf runs on `TcpTransport` (Deno's WebSocket held a command of 1 to 64 KiB ~40 ms for a delayed ACK), and distils out-of-process sibling frames of one origin, which share a renderer, in one call. e8167bb changes nothing measured and adds the figures of \"Where the tokens and the time go\". 5804ecc adds `/mui-settings` (Material UI 5, its UMD build) with three tasks, and nine component-library pages with a task each. 673228f counts clicks verified by the bench's own probe with every receipt (whole, handled: default prevented or the DOM changed between press and release, gone: the press on the target, then its document replaced); 5804ecc counted only whole clicks as verified and presses taken on mousedown apart. 59879cb adds the widget libraries' pages (select2, Choices.js, SortableJS, dnd-kit, Quill, TipTap, styled uploads, a closed shadow root, icon-only controls) with tasks on six of them (a picker each, a reorder each, a like, a closed-root form), and its text names elements bare where nothing follows the name and leaves out `link` before a shown target; its 39 false ids were real controls its truth could not see (icons acted on by listeners alone, drag sources and drop targets, a closed shadow root's form) and two engine faults. In this run the truth hand-labels those controls, counts a control shown on a card's hover where the page lists it, reads a closed root the page hands over, treats a pointer box that draws another control (slotted into it) as its container, and leaves out text slotted into a visually hidden label (Carbon's pager: \"Page of 3 pages\", which only the false id's name had kept); the engine names a control hidden by `visibility` until hover by its own words (it had a nameless id), gives no id to a listened host around a disabled button (Carbon's first-page arrow), and names an icon by the symbol it draws (`⚑` → flag).",
    "",
    "## How it is measured",
    "",
    "- Ground truth, per page, from `fixtures/apps/page/truth.ts`, run over CDP in the main world of the top document and of every out-of-process iframe, independently of the distiller: every visible link, button, input, select, textarea, summary, contenteditable and element with an ARIA widget role, plus an element whose cursor is `pointer` where its parent's is not and that holds no other control or label (in the DOM or as drawn: slotted content sits in its slot's box, so Vaadin's select field box is its value button's container); vetoed when disabled, under `aria-hidden` or `inert`, not rendered, of zero size, off the document, clipped away by a non-scrolling box, or covered (its centre, scrolled into view, hit-tests to something else; a visually hidden control with a visible label is aimed at on the label). Visible text: text nodes rendered, visible, with a font size, a box, and not in a visually hidden (1px, clipped) box (as drawn: slotted text in its slot's box).",
    '- Matching: each id is resolved to its element (`Observer.resolve`, `DOM.describeNode`, `DOM.resolveNode` in the main world) and matched to a control when it is the control, one of its labels, an ancestor holding that control and no other, or a descendant of it. An id on a scroll container is neither a match nor a false id. Any other id is a false id; a miss is a control no id matched ("merged into" names the container id that swallowed it). A control left out by a summary line of repeated chrome (link lists, tag clouds, footers outside `main`/`article`; the main content is never summarised) is "summarised, listed on request" when an observation with `summariseAfter: 0`, the mode the line names, gives it an id: it counts towards recall and is reported apart ("with an id in the text" leaves it out).',
    "- Content kept: the truth text's words (lower-cased runs of letters and digits, with multiplicity) found in the observation text, or in `locator('body').ariaSnapshot()`'s text, or in `page.ariaSnapshot({ mode: 'ai' })`'s.",
    "- Two peers. `locator('body').ariaSnapshot()`, the yardstick the observation's targets were set against, is Playwright's default snapshot: YAML of roles and names of the top document, with no element references (an agent cannot act on it) and nothing of out-of-process iframes. `page.ariaSnapshot({ mode: 'ai' })` is what Playwright gives agents (Playwright MCP's page snapshot): the same tree with `[ref=eN]` on every element and the iframes' content, which is what this engine's observation carries (ids, frames).",
    "- Tasks: `fixtures/apps/tasks.ts`, solved from the JSON observation (elements by role and name) and `env.step` actions only; success read from the page's own state over CDP.",
    "- Hand labels: where the rules miss a control a person sees, the page lists CSS selectors in `globalThis.__truthControls` and the truth counts what they match as controls (a labelled control holds no other: a kanban lane and its card count apart). Five pages have them: jQuery UI's datepicker Prev/Next (`<a>` without `href`, role or pointer cursor, driven by a delegated handler), which the runs up to 6945e7e counted as false ids; `/icon-feed`'s icons acted on by click listeners alone; `/drag`'s SortableJS items, kanban lanes and card; `/uploads`' drop-only zone. `/hover-cards` lists its Hide buttons, `visibility: hidden` until their card is hovered, in `globalThis.__truthHoverControls` as `[control, container]` pairs: the truth aims at the card. `/closed-shadow` hands its closed shadow root to the truth in `globalThis.__truthClosedRoots` (host to root), which no other script can reach.",
    "",
    "## Summary",
    "",
    "| figure | target | measured |",
    "| --- | --- | --- |",
    `| recall of visible actionable controls with an id (or listed on request by a summary line of chrome) | 100% | ${
      pct(summary.recall)
    } (${totalMatched} + ${totalSummarised} summarised / ${totalControls}); with an id in the text: ${
      pct(summary.recallInText)
    } |`,
    `| ids on non-actionable elements | 0 | ${summary.falseIds} |`,
    `| content kept, mean over pages (ariaSnapshot) | ≥ ariaSnapshot on every page | ${
      pct(summary.contentKept)
    } (${pct(summary.contentKeptAria)}); below on ${summary.pagesContentBelowAria.length} pages |`,
    `| tokens vs ariaSnapshot, median page | ≤ 50% | ${pct(summary.tokensVsAria)} |`,
    `| latency vs ariaSnapshot, median page | ≤ 33% and never slower | ${
      pct(summary.latencyVsAria)
    }; slower on ${summary.pagesSlowerThanAria.length} pages |`,
    `| scripted tasks solved | all | ${summary.tasksSolved}/${summary.tasksTotal} |`,
    `| clicks verified over clicks reported ok (a receipt the bench read in the page: whole, handled or gone) | 100% | ${
      summary.clicksOk === undefined
        ? "not measured"
        : `${
          pct(summary.clicksVerified! / Math.max(1, summary.clicksOk))
        } (${summary.clicksVerified}/${summary.clicksOk}${
          summary.clickReceipts ? `: ${receiptsText(summary.clickReceipts)}` : ""
        })`
    } |`,
    "",
    "Against Playwright's AI snapshot (references and iframes, as this observation has):",
    "",
    "| figure | measured |",
    "| --- | --- |",
    `| content kept, mean over pages (AI snapshot) | ${pct(summary.contentKept)} (${
      pct(summary.contentKeptAriaAi)
    }); below on ${withAi.filter((r) => r.contentKept < r.contentKeptAriaAi!).length} pages |`,
    `| tokens vs AI snapshot, median page | ${pct(summary.tokensVsAriaAi)} |`,
    `| latency vs AI snapshot, median page | ${
      pct(summary.latencyVsAriaAi)
    }; slower on ${summary.pagesSlowerThanAriaAi.length} pages |`,
    "",
    ...accountMarkdown(summary, accountedOf(withAi), pct),
    "## Pages",
    "",
    "`ai` columns: Playwright's AI snapshot.",
    "",
    "| page | framework | controls | with id | summarised | false ids | content kept | aria kept | ai kept | tokens | aria tokens | ai tokens | ms | aria ms | ai ms |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...pageRows.map((r) =>
      `| ${r.path} | ${r.framework} | ${r.controls} | ${r.matched} | ${
        r.summarised ?? 0
      } | ${r.falseIds} | ${pct(r.contentKept)} | ${pct(r.contentKeptAria)} | ${
        r.contentKeptAriaAi === undefined ? "n/a" : pct(r.contentKeptAriaAi)
      } | ${r.tokens.engine} | ${r.tokens.aria} | ${
        r.tokens.ariaAi ?? "n/a"
      } | ${r.ms.engine} | ${r.ms.aria} | ${r.ms.ariaAi ?? "n/a"} |`
    ),
    "",
    "## Tasks",
    "",
    "| task | page | pattern | solved | clicks verified / reported ok |",
    "| --- | --- | --- | --- | --- |",
    ...taskRows.map((r) =>
      `| ${r.name} | ${r.page} | ${r.pattern} | ${r.solved}/${r.seeds} | ${
        r.clicksOk === undefined
          ? "n/a"
          : `${r.clicksVerified}/${r.clicksOk}${
            r.clickReceipts
              ? ` (${receiptsText(r.clickReceipts)})`
              : r.clicksTakenOnPress
              ? ` (${r.clicksTakenOnPress} taken on mousedown)`
              : ""
          }`
      } |`
    ),
    "",
    "## Misses by page",
    "",
    "Controls of the ground truth without an id, and why; then ids on elements that are no control.",
    "",
  ];
  for (const r of pageRows) {
    const listed = r.summarisedList ?? [];
    if (r.misses.length === 0 && r.falseIdList.length === 0 && listed.length === 0) continue;
    md.push(`### ${r.path}`, "");
    if (listed.length) {
      md.push(
        `- summarised, listed on request (${listed.length}): ${listed.slice(0, 8).join(", ")}${
          listed.length > 8 ? `, … ${listed.length - 8} more` : ""
        }`,
      );
    }
    const byReason = new Map<string, string[]>();
    for (const miss of r.misses) {
      byReason.set(miss.reason, [...(byReason.get(miss.reason) ?? []), miss.control]);
    }
    for (const [reason, list] of byReason) {
      md.push(
        `- ${reason} (${list.length}): ${list.slice(0, 12).join(", ")}${
          list.length > 12 ? `, … ${list.length - 12} more` : ""
        }`,
      );
    }
    for (const falseId of r.falseIdList.slice(0, 10)) md.push(`- false id: ${falseId}`);
    if (r.falseIdList.length > 10) md.push(`- … ${r.falseIdList.length - 10} more false ids`);
    md.push("");
  }
  md.push("## Task failures", "");
  for (const r of taskRows) {
    for (const f of r.failures) {
      md.push(`- ${r.name} seed ${f.seed} (${f.instruction}): ${f.reason.slice(0, 200)}`);
    }
  }
  md.push("");

  return md.join("\n");
}

/** The receipts of all tasks that have them, summed; `undefined` when none has. */
function receiptsOf(taskRows: TaskRow[]): ClickReceipts | undefined {
  const rows = taskRows.filter((r) => r.clickReceipts);
  if (rows.length === 0) return undefined;
  const sum = { whole: 0, handled: 0, gone: 0, unverified: 0 };
  for (const r of rows) {
    for (const key of Object.keys(sum) as (keyof ClickReceipts)[]) {
      sum[key] += r.clickReceipts![key];
    }
  }
  return sum;
}

/** The receipts as text: `whole 40, handled 2, gone 0, no receipt 0`. */
function receiptsText(r: ClickReceipts): string {
  return `whole ${r.whole}, handled ${r.handled}, gone ${r.gone}, no receipt ${r.unverified}`;
}
