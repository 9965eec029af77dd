/**
 * Runs the test suite, or any command given after `--`, and with
 * `WEBSERV_STRESS=1` runs CPU burners beside it: one busy process per core
 * (`WEBSERV_STRESS_BURNERS` to choose how many), so the tests meet a machine
 * as loaded as a shared CI runner. Used by `deno task test`; without
 * `WEBSERV_STRESS` it only runs the commands, as the task always did.
 *
 * The burners end with the run, whatever happens: stopped when the commands
 * end or fail, when this process gets SIGINT or SIGTERM, on their own when
 * this process dies (their stdin, a pipe from here, closes), and in any case
 * after `WEBSERV_STRESS_MAX_S` seconds (default 7,200).
 *
 * The commands run one after the other, stopping at the first that fails;
 * the exit code is theirs. Extra arguments (`deno task test --filter x`) go
 * to the last command, as `deno task` appends them.
 *
 * @module
 */

/**
 * What `deno task test` runs: the main suites in parallel, then the Incus
 * suite alone, then the 3-minute soak alone (it measures the server's event
 * loop, so it runs beside no other suite). `test/apps/` (real applications,
 * whose images take minutes to build) runs only with `deno task test:apps`.
 */
export const TEST_COMMANDS: string[][] = [
  [
    "deno",
    "test",
    "--allow-all",
    "--parallel",
    "--doc",
    // verl_test.ts needs a venv with verl and torch (about 6 GB, with CUDA
    // wheels torch does not import without); docs/python.md says how to run it.
    "--ignore=test/sandboxes/incus,test/apps,test/bench/soak_test.ts,test/adapters/python/verl_test.ts",
  ],
  ["deno", "test", "--allow-all", "test/sandboxes/incus"],
  ["deno", "test", "--allow-all", "test/bench/soak_test.ts"],
];

/**
 * A burner: spins in slices of 50 ms, yielding between them so that the end
 * of its stdin (its parent gone) or the deadline stops it.
 */
const BURNER = `
const end = Date.now() + Number(Deno.args[0]);
(async () => {
  const buffer = new Uint8Array(16);
  try { while ((await Deno.stdin.read(buffer)) !== null); } catch { /* closed */ }
  Deno.exit(0);
})();
while (Date.now() < end) {
  const slice = Date.now() + 50;
  while (Date.now() < slice);
  await new Promise((resolve) => setTimeout(resolve, 0));
}
Deno.exit(0);
`;

/** The running burners. */
export interface Burners {
  /** The burners' process ids. */
  pids: number[];
  /** Kills them and waits for them to end; safe to call more than once. */
  stop(): Promise<void>;
}

/**
 * Starts `count` CPU burners, each ending by itself after `maxMs` or when
 * this process goes (its stdin closes).
 *
 * @param count how many busy processes
 * @param maxMs the longest they run
 * @returns the burners, to stop
 */
export function startBurners(count: number, maxMs: number): Burners {
  const children = Array.from({ length: count }, () =>
    new Deno.Command(Deno.execPath(), {
      args: ["eval", "--quiet", BURNER, String(maxMs)],
      stdin: "piped",
      stdout: "null",
      stderr: "inherit",
    }).spawn());
  let stopped: Promise<void> | undefined;
  return {
    pids: children.map((child) => child.pid),
    stop() {
      stopped ??= (async () => {
        for (const child of children) {
          try {
            child.kill("SIGKILL");
          } catch { /* already gone */ }
        }
        await Promise.allSettled(children.map((child) => child.status));
        await Promise.allSettled(children.map((child) => child.stdin.close()));
      })();
      return stopped;
    },
  };
}

function positiveInt(name: string, fallback: number): number {
  const raw = Deno.env.get(name);
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a whole number of at least 1, not "${raw}"`);
  }
  return value;
}

/** Whether `WEBSERV_STRESS` asks for burners: set, and not `0`, `false` or empty. */
export function stressWanted(value: string | undefined): boolean {
  return value !== undefined && !["", "0", "false", "no", "off"].includes(value.toLowerCase());
}

/**
 * Runs `commands` in turn with burners beside them when asked.
 *
 * @param commands the commands, each a program and its arguments
 * @returns the exit code of the first command that failed, else 0
 */
export async function run(commands: string[][]): Promise<number> {
  let burners: Burners | undefined;
  if (stressWanted(Deno.env.get("WEBSERV_STRESS"))) {
    const count = positiveInt("WEBSERV_STRESS_BURNERS", navigator.hardwareConcurrency || 2);
    const maxS = positiveInt("WEBSERV_STRESS_MAX_S", 7_200);
    burners = startBurners(count, maxS * 1000);
    console.error(
      `stress: ${count} CPU burner(s) running (pids ${
        burners.pids.join(", ")
      }), for at most ${maxS} s`,
    );
  }
  let child: Deno.ChildProcess | undefined;
  const onSignal = (signal: Deno.Signal) => () => {
    // The terminal sends SIGINT to the whole group; a SIGTERM to this
    // process alone is passed on. Either way the burners go now.
    try {
      child?.kill(signal);
    } catch { /* already gone */ }
    void burners?.stop();
  };
  const signals: [Deno.Signal, () => void][] = [
    ["SIGINT", onSignal("SIGINT")],
    ["SIGTERM", onSignal("SIGTERM")],
  ];
  for (const [signal, handler] of signals) Deno.addSignalListener(signal, handler);
  try {
    for (const [program, ...args] of commands) {
      if (program === undefined) continue;
      const env = burners ? { WEBSERV_STRESS_PIDS: burners.pids.join(",") } : undefined;
      // `deno` is this Deno, as in `deno task`.
      child = new Deno.Command(program === "deno" ? Deno.execPath() : program, {
        args,
        stdin: "inherit",
        stdout: "inherit",
        stderr: "inherit",
        ...(env ? { env } : {}),
      }).spawn();
      const status = await child.status;
      if (!status.success) return status.code || 1;
    }
    return 0;
  } finally {
    for (const [signal, handler] of signals) Deno.removeSignalListener(signal, handler);
    if (burners) {
      await burners.stop();
      console.error("stress: burners stopped");
    }
  }
}

if (import.meta.main) {
  const split = Deno.args.indexOf("--");
  let commands: string[][];
  if (split >= 0) {
    commands = [Deno.args.slice(split + 1)];
  } else {
    commands = TEST_COMMANDS.map((command) => [...command]);
    commands[commands.length - 1]!.push(...Deno.args);
  }
  Deno.exit(await run(commands));
}
