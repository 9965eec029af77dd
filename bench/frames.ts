/**
 * Frames benchmark: observation latency of a page with many out-of-process
 * iframes (and the same page with same-process iframes), whole-page mode,
 * median of repeated observations after a warm-up. Before/after numbers of
 * distilling frames in parallel are kept in `bench/results/frames.md`.
 *
 * Run: `deno run --allow-all bench/frames.ts [label]`; prints one Markdown
 * table row per page.
 *
 * @module
 */
import { Browser, Observer } from "../engine/mod.ts";
import { newContext } from "../engine/browser/browser.ts";

const LABEL = Deno.args[0] ?? "run";
const RUNS = 15;
const LOAD = Deno.loadavg();

function frameHtml(n: number): string {
  const rows = Array.from(
    { length: 12 },
    (_, i) => `<li><a href="/x/${n}/${i}">Item ${n}.${i}</a> <button>Buy ${n}.${i}</button></li>`,
  ).join("");
  return `<!doctype html><html><body style="margin:0"><h3>Widget ${n}</h3><ul>${rows}</ul>` +
    `<input placeholder="Search ${n}"></body></html>`;
}

function pageHtml(count: number, origin: string): string {
  const frames = Array.from(
    { length: count },
    (_, i) => `<iframe src="${origin}/frame/${i}" style="width:300px;height:150px"></iframe>`,
  ).join("");
  return `<!doctype html><html><head><title>Frames</title></head><body>` +
    `<h1>Dashboard</h1><button>Refresh</button>${frames}</body></html>`;
}

const server: Deno.HttpServer<Deno.NetAddr> = Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen() {},
}, (request: Request): Response => {
  const url = new URL(request.url);
  const html = (body: string) =>
    new Response(body, { headers: { "content-type": "text/html; charset=utf-8" } });
  const frame = url.pathname.match(/^\/frame\/(\d+)$/);
  if (frame) return html(frameHtml(Number(frame[1])));
  const page = url.pathname.match(/^\/page\/(\d+)\/(same|cross)$/);
  if (page) {
    const port: number = server.addr.port;
    const origin: string = page[2] === "cross"
      ? `http://localhost:${port}`
      : `http://127.0.0.1:${port}`;
    return html(pageHtml(Number(page[1]), origin));
  }
  return new Response("not found", { status: 404 });
});

const browser = await Browser.launch();
const rows: string[] = [];
try {
  for (const [count, kind] of [[10, "cross"], [25, "cross"], [25, "same"]] as const) {
    const context = await newContext(browser);
    const observer = Observer.attach(context);
    const page = await context.newPage(
      `http://127.0.0.1:${server.addr.port}/page/${count}/${kind}`,
    );
    // Wait until every frame is attached and loaded.
    for (let i = 0; i < 100; i++) {
      const observation = await observer.observe(page, { summariseAfter: 0 });
      const widgets = observation.text.split("\n").filter((line) => /heading "?Widget/.test(line));
      if (widgets.length === count) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const total: number[] = [];
    const inPage: number[] = [];
    let ids = 0;
    for (let i = 0; i < RUNS; i++) {
      const observation = await observer.observe(page, { summariseAfter: 0 });
      total.push(observation.timing.totalMs);
      inPage.push(observation.timing.pageMs);
      ids = observation.elements.length;
    }
    const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1]!;
    rows.push(
      `| ${LABEL} | ${count} ${
        kind === "cross" ? "out-of-process" : "same-process"
      } | ${page.frameSessions.length} | ${ids} | ${median(total).toFixed(1)} | ${
        median(inPage).toFixed(1)
      } |`,
    );
    await context.close();
  }
} finally {
  await browser.close();
  await server.shutdown();
}
console.log(`load average at start: ${LOAD.map((n) => n.toFixed(2)).join(" ")}`);
console.log("| code | iframes | OOPIF sessions | ids | observe p50 ms | in-page ms (sum) |");
console.log("| --- | --- | ---: | ---: | ---: | ---: |");
for (const row of rows) console.log(row);
