/**
 * CDP microbenchmarks: the transports side by side on one Chromium, in one
 * run.
 *
 * For each transport (the default on Deno, `TcpTransport`; the runtime's
 * WebSocket, chrome-remote-interface, puppeteer-core) the engine's
 * `Connection` runs over it and attaches its own flat session to the same
 * pages. Measured:
 * - round-trip latency (p50/p90/p99) of `Runtime.evaluate("1")`, of
 *   `Runtime.evaluate` with a 4 KiB and a 32 KiB expression (a command's
 *   size decides whether Nagle's algorithm holds it back), `DOM.getDocument`,
 *   `Input.dispatchMouseEvent` (mouseMoved) and `Page.captureScreenshot` of
 *   an 800x600 viewport, one command at a time;
 * - throughput of `Runtime.evaluate("1")` with 1, 8 and 64 pages in parallel,
 *   each page sending its next command as soon as the last one is answered.
 *
 * The transports take turns in short blocks, in a rotating order, so machine
 * noise hits all alike; every transport warms up first. Results go to
 * `bench/results/cdp.json` and `bench/results/cdp.md`.
 *
 * Run with `deno task bench:cdp`.
 *
 * @module
 */
import puppeteer from "puppeteer-core";
import { CriTransport } from "../adapters/cri_transport.ts";
import { PuppeteerTransport } from "../adapters/puppeteer_transport.ts";
import { BrowserProcess } from "../engine/mod.ts";
import {
  type CdpSession,
  Connection,
  TcpTransport,
  type Transport,
  WebSocketTransport,
} from "../engine/cdp/mod.ts";

const ROUNDS = 12;
const THROUGHPUT_MS = 400;
const PAGE_COUNTS = [1, 8, 64] as const;
const VIEWPORT = { width: 800, height: 600, deviceScaleFactor: 1, mobile: false };
/** A page with some substance: 300 list items, a table and styled text. */
const PAGE_URL = `data:text/html,${
  encodeURIComponent(
    `<!doctype html><title>bench</title><style>li:nth-child(odd){background:#eef}</style>` +
      `<h1>CDP bench</h1><ul>${
        Array.from({ length: 300 }, (_, i) => `<li>Item ${i} <a href="#${i}">link</a></li>`)
          .join("")
      }</ul>`,
  )
}`;

interface Command {
  name: string;
  /** Samples per transport per round. */
  samples: number;
  run(session: CdpSession, i: number): Promise<unknown>;
}

const COMMANDS: Command[] = [
  {
    name: "Runtime.evaluate",
    samples: 200,
    run: (session) => session.send("Runtime.evaluate", { expression: "1" }),
  },
  {
    name: "Runtime.evaluate (4 KiB)",
    samples: 20,
    run: (session) => session.send("Runtime.evaluate", { expression: padded(4096) }),
  },
  {
    name: "Runtime.evaluate (32 KiB)",
    samples: 20,
    run: (session) => session.send("Runtime.evaluate", { expression: padded(32768) }),
  },
  {
    name: "DOM.getDocument",
    samples: 150,
    run: (session) => session.send("DOM.getDocument"),
  },
  {
    name: "Input.dispatchMouseEvent",
    samples: 50,
    run: (session, i) =>
      session.send("Input.dispatchMouseEvent", {
        type: "mouseMoved",
        x: 100 + (i % 400),
        y: 100 + (i % 300),
      }),
  },
  {
    name: "Page.captureScreenshot",
    samples: 10,
    run: (session) => session.send("Page.captureScreenshot", { format: "png" }),
  },
];

/** `1` and a comment: an expression of `bytes` characters. */
function padded(bytes: number): string {
  return `1/*${"x".repeat(bytes - 5)}*/`;
}

interface Contender {
  name: string;
  connection: Connection;
  /** One session per page, in page order. */
  sessions: CdpSession[];
  dispose(): Promise<void>;
}

interface LatencyStats {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
}

interface ThroughputStats {
  /** The median of the rounds' commands per second. */
  commandsPerSecond: number;
  /** Commands per second over all rounds pooled. */
  pooled: number;
  /** Commands per second of each round. */
  rounds: number[];
}

async function main(): Promise<void> {
  const started = Date.now();
  const loadAtStart = await loadAverage();
  // Background tabs would be throttled, and a hidden one never acks input or
  // paints a screenshot: keep all renderers awake, the measured page in front.
  const process = await BrowserProcess.launch({
    args: [
      "--disable-renderer-backgrounding",
      "--disable-background-timer-throttling",
      "--disable-backgrounding-occluded-windows",
    ],
  });
  const contenders: Contender[] = [];
  try {
    const setup = new Connection(await WebSocketTransport.connect(process.wsEndpoint));
    const maxPages = Math.max(...PAGE_COUNTS);
    const targetIds: string[] = [];
    for (let i = 0; i < maxPages; i++) {
      const { targetId } = await setup.send("Target.createTarget", { url: PAGE_URL });
      targetIds.push(targetId);
    }
    const { product } = await setup.send("Browser.getVersion");

    contenders.push(
      await contender(
        "TcpTransport (default on Deno)",
        await TcpTransport.connect(process.wsEndpoint),
        targetIds,
      ),
    );
    contenders.push(
      await contender(
        "WebSocketTransport (the runtime's WebSocket)",
        await WebSocketTransport.connect(process.wsEndpoint),
        targetIds,
      ),
    );
    contenders.push(
      await contender("CriTransport", await CriTransport.connect(process.wsEndpoint), targetIds),
    );
    // Puppeteer keeps its hands off the pages: no page objects, no viewport.
    const pptr = await puppeteer.connect({
      browserWSEndpoint: process.wsEndpoint,
      defaultViewport: null,
      targetFilter: (target) => target.type() === "browser",
    });
    contenders.push(
      await contender(
        "PuppeteerTransport",
        await PuppeteerTransport.create(pptr),
        targetIds,
        () => pptr.disconnect(),
      ),
    );

    await contenders[0]!.sessions[0]!.send("Page.bringToFront");
    log("warming up");
    for (const c of contenders) {
      for (const command of COMMANDS) {
        const first = c.sessions[0]!;
        for (let i = 0; i < Math.ceil(command.samples / 5); i++) await command.run(first, i);
      }
      for (const pages of PAGE_COUNTS) await throughput(c, pages, THROUGHPUT_MS / 4);
    }

    const samples = new Map<string, Map<string, number[]>>();
    const rates = new Map<string, Map<number, { count: number; ms: number; rounds: number[] }>>();
    for (const c of contenders) {
      samples.set(c.name, new Map(COMMANDS.map((command) => [command.name, []])));
      rates.set(
        c.name,
        new Map(PAGE_COUNTS.map((pages) => [pages, { count: 0, ms: 0, rounds: [] }])),
      );
    }
    for (let round = 0; round < ROUNDS; round++) {
      log(`round ${round + 1}/${ROUNDS}`);
      for (const c of rotate(contenders, round)) {
        const session = c.sessions[0]!;
        for (const command of COMMANDS) {
          const into = samples.get(c.name)!.get(command.name)!;
          for (let i = 0; i < command.samples; i++) {
            const t0 = performance.now();
            await command.run(session, i);
            into.push(performance.now() - t0);
          }
        }
      }
      for (const pages of PAGE_COUNTS) {
        for (const c of rotate(contenders, round)) {
          const { count, ms } = await throughput(c, pages, THROUGHPUT_MS);
          const rate = rates.get(c.name)!.get(pages)!;
          rate.count += count;
          rate.ms += ms;
          rate.rounds.push(Math.round(count / ms * 1000));
        }
      }
    }

    const latency: Record<string, Record<string, LatencyStats>> = {};
    const throughputs: Record<string, Record<string, ThroughputStats>> = {};
    for (const c of contenders) {
      latency[c.name] = Object.fromEntries(
        [...samples.get(c.name)!].map(([name, values]) => [name, stats(values)]),
      );
      throughputs[c.name] = Object.fromEntries(
        [...rates.get(c.name)!].map(([pages, { count, ms, rounds }]) => [
          String(pages),
          {
            commandsPerSecond: median(rounds),
            pooled: Math.round(count / ms * 1000),
            rounds,
          },
        ]),
      );
    }
    const result = {
      date: new Date(started).toISOString(),
      durationSeconds: Math.round((Date.now() - started) / 1000),
      machine: { ...await machine(product), loadAtStart, loadAtEnd: await loadAverage() },
      config: {
        rounds: ROUNDS,
        samplesPerRound: Object.fromEntries(COMMANDS.map((c) => [c.name, c.samples])),
        throughputMsPerRound: THROUGHPUT_MS,
        pageCounts: PAGE_COUNTS,
        viewport: VIEWPORT,
        baseline: contenders[0]!.name,
      },
      latency,
      throughput: throughputs,
    };
    const markdown = report(result);
    // deno-lint-ignore no-console
    console.log(`\n${markdown}`);
    const dir = new URL("./results/", import.meta.url);
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(new URL("cdp.json", dir), `${JSON.stringify(result, null, 2)}\n`);
    await Deno.writeTextFile(new URL("cdp.md", dir), markdown);
    setup.close();
  } finally {
    for (const c of contenders) await c.dispose().catch((error) => log(`dispose: ${error}`));
    await process.kill();
  }
}

/** Opens the engine's connection over `transport` and attaches a session to every page. */
async function contender(
  name: string,
  transport: Transport,
  targetIds: string[],
  release: () => Promise<void> = () => Promise.resolve(),
): Promise<Contender> {
  const connection = new Connection(transport, { timeoutMs: 20_000 });
  const sessions: CdpSession[] = [];
  for (const targetId of targetIds) {
    const { sessionId } = await connection.send("Target.attachToTarget", {
      targetId,
      flatten: true,
    });
    sessions.push(connection.session(sessionId)!);
  }
  await sessions[0]!.send("Emulation.setDeviceMetricsOverride", VIEWPORT);
  return {
    name,
    connection,
    sessions,
    async dispose() {
      connection.close();
      await release();
    },
  };
}

/** Runs `Runtime.evaluate("1")` back to back on `pages` pages at once for `ms` milliseconds. */
async function throughput(
  c: Contender,
  pages: number,
  ms: number,
): Promise<{ count: number; ms: number }> {
  let count = 0;
  const t0 = performance.now();
  const deadline = t0 + ms;
  await Promise.all(
    c.sessions.slice(0, pages).map(async (session) => {
      while (performance.now() < deadline) {
        await session.send("Runtime.evaluate", { expression: "1" });
        count++;
      }
    }),
  );
  return { count, ms: performance.now() - t0 };
}

function rotate<T>(items: T[], by: number): T[] {
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2);
}

function stats(values: number[]): LatencyStats {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return {
    n: sorted.length,
    p50: round(at(0.5)),
    p90: round(at(0.9)),
    p99: round(at(0.99)),
    mean: round(sorted.reduce((a, b) => a + b, 0) / sorted.length),
  };
}

/** The 1, 5 and 15 minute load averages: how busy the machine was besides this run. */
async function loadAverage(): Promise<string> {
  const text = await Deno.readTextFile("/proc/loadavg").catch(() => "");
  return text.split(" ").slice(0, 3).join(" ");
}

async function machine(product: string): Promise<Record<string, string | number>> {
  const cpuinfo = await Deno.readTextFile("/proc/cpuinfo").catch(() => "");
  const meminfo = await Deno.readTextFile("/proc/meminfo").catch(() => "");
  const memKb = Number(meminfo.match(/^MemTotal:\s+(\d+)/m)?.[1] ?? 0);
  const kernel = await Deno.readTextFile("/proc/sys/kernel/osrelease").catch(() => "");
  const imports = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url)))
    .imports as Record<string, string>;
  return {
    cpu: cpuinfo.match(/^model name\s*:\s*(.+)$/m)?.[1]?.trim() ?? "unknown",
    cores: navigator.hardwareConcurrency,
    memoryGiB: Math.round(memKb / 1024 / 1024 * 10) / 10,
    os: `${Deno.build.os} ${kernel.trim()}`.trim(),
    chromium: product,
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    chromeRemoteInterface: imports["chrome-remote-interface"] ?? "",
    puppeteerCore: imports["puppeteer-core"] ?? "",
  };
}

interface Result {
  date: string;
  durationSeconds: number;
  machine: Record<string, string | number>;
  config: { rounds: number; throughputMsPerRound: number; baseline: string };
  latency: Record<string, Record<string, LatencyStats>>;
  throughput: Record<string, Record<string, ThroughputStats>>;
}

function report(result: Result): string {
  const { machine: m, config } = result;
  const names = Object.keys(result.latency);
  const base = config.baseline;
  const ratio = (value: number, baseline: number) => `${(value / baseline).toFixed(2)}×`;
  const lines = [
    "# CDP microbenchmarks",
    "",
    `Run ${result.date} with \`deno task bench:cdp\` (${result.durationSeconds} s).`,
    "",
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB RAM, ${m.os}; ` +
    `${m.chromium} headless; Deno ${m.deno} (V8 ${m.v8}); ` +
    `${m.chromeRemoteInterface}; ${m.puppeteerCore}. Load average (1/5/15 min) ` +
    `${m.loadAtStart} at the start and ${m.loadAtEnd} at the end: other work shared the ` +
    "machine, which is why the transports take turns.",
    "",
    "One Chromium, one Deno process. Every transport carries the engine's `Connection` and " +
    "attaches its own flat session to the same pages; the transports take turns in " +
    `${config.rounds} rounds of short blocks, in rotating order, after a warm-up. ` +
    "Chromium runs with the engine's default flags plus `--disable-renderer-backgrounding`, " +
    "`--disable-background-timer-throttling` and `--disable-backgrounding-occluded-windows`; " +
    "the measured page is brought to front (a hidden tab never acks input nor paints). " +
    "Puppeteer is connected with `defaultViewport: null` and a `targetFilter` that " +
    "keeps it off the pages. Ratios are to the default transport: above 1× is slower " +
    "for latency, below 1× is slower for throughput.",
    "",
    "## Round-trip latency (ms), one command at a time",
    "",
    "Over Deno's WebSocket a command of 1 to 64 KiB waits for the browser's delayed ACK " +
    "when nothing else is in flight: " +
    "Nagle's algorithm is on and a frame's header and payload leave in two writes. " +
    "`TcpTransport` sets `TCP_NODELAY` and writes each frame whole.",
    "",
    "| command | transport | n | p50 | p90 | p99 | p50 ratio | p99 ratio |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const command of Object.keys(result.latency[base]!)) {
    const b = result.latency[base]![command]!;
    for (const name of names) {
      const s = result.latency[name]![command]!;
      lines.push(
        `| ${command} | ${name} | ${s.n} | ${s.p50.toFixed(3)} | ${s.p90.toFixed(3)} | ` +
          `${s.p99.toFixed(3)} | ${ratio(s.p50, b.p50)} | ${ratio(s.p99, b.p99)} |`,
      );
    }
  }
  lines.push(
    "",
    `## Throughput of \`Runtime.evaluate("1")\` (commands/s), pages in parallel`,
    "",
    `Each page sends its next command when the last is answered; ${config.rounds} rounds of ` +
      `${config.throughputMsPerRound} ms per transport and page count; commands/s is the ` +
      "median of the rounds, pooled is all commands over all rounds' time.",
    "",
    "| pages | transport | commands/s | ratio | pooled | per round |",
    "| ---: | --- | ---: | ---: | ---: | --- |",
  );
  for (const pages of Object.keys(result.throughput[base]!)) {
    const b = result.throughput[base]![pages]!;
    for (const name of names) {
      const t = result.throughput[name]![pages]!;
      lines.push(
        `| ${pages} | ${name} | ${t.commandsPerSecond} | ` +
          `${ratio(t.commandsPerSecond, b.commandsPerSecond)} | ${t.pooled} | ` +
          `${t.rounds.join(", ")} |`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

function log(message: string): void {
  // deno-lint-ignore no-console
  console.error(`[bench:cdp] ${message}`);
}

if (import.meta.main) await main();
