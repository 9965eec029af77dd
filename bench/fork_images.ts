/**
 * `deno run -A bench/fork_images.ts IMAGE_BEFORE IMAGE_AFTER --out=NAME --about=TEXT`:
 * WordPress's shared runtime on two builds side by side (`deno task image:apps
 * --alias=NAME wordpress` makes one of a checkout). One runtime of each, one
 * parent env each that made one write; samples alternate between the two: a
 * fork of one (destroyed, the spares refilled), then a reset of the parent
 * and its write again. Reports p50 and p95 of each, the fork's import steps
 * (`SharedRuntimeInstance.forked.phases`, ms from the import's start, p50),
 * and 4 forks asked at once. Writes `bench/results/NAME.md`; `TEXT` says
 * what differs between the two images.
 *
 * Committed runs: `sandbox_fork_syncs` (the env servers syncing, then not)
 * and `sandbox_fork_import` (the import's steps run one after another, then
 * beside each other), `sandbox_fork_sessions` (a login per fork, then held
 * sessions and a spare's tables opened ahead), `sandbox_fork_overlap` (the
 * parent's tables read beside the spare's check, the read under the lock
 * beside the clone).
 *
 * BENCH_FORK_RUNS (samples of each, default 15).
 *
 * @module
 */
import { Gateway } from "../sandboxes/gateway.ts";
import type { Instance } from "../sandboxes/types.ts";
import type { SharedRuntimeInstance } from "../sandboxes/incus/shared_runtime_sandbox.ts";
import { backendsOf } from "./_sandbox_app_backends.ts";
import { APPS } from "./_sandbox_app_specs.ts";
import { loadAverage, machine, progress, stats } from "./_sandbox_common.ts";

const RUNS = Number(Deno.env.get("BENCH_FORK_RUNS") ?? 15);
const option = (name: string) =>
  Deno.args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const IMAGES = Deno.args.filter((arg) => !arg.startsWith("--"));
const NAME = option("out"), ABOUT = option("about");
if (IMAGES.length !== 2 || !NAME || !ABOUT || !/^[\w-]+$/.test(NAME)) {
  console.error(
    "Usage: deno run -A bench/fork_images.ts IMAGE_BEFORE IMAGE_AFTER --out=NAME --about=TEXT",
  );
  Deno.exit(2);
}
const OUT = new URL(`./results/${NAME}.md`, import.meta.url);

const wordpress = APPS.find((a) => a.key === "wordpress");
if (!wordpress) throw new Error("WordPress declares no sandbox bench");

/** Ms a promise took. */
async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await run();
  return [value, performance.now() - started];
}

await using gateway = new Gateway();
const started = new Date().toISOString(), loadBefore = loadAverage().join(", ");
const setups = [];
for (const image of IMAGES) {
  const app = { ...wordpress, image };
  const [backend] = backendsOf(app, ["shared"]);
  if (!backend) throw new Error("no shared-runtime backend");
  const sandbox = await backend.open(gateway, app);
  await (await sandbox.create({ seed: 1 })).destroy();
  await backend.settle?.(sandbox);
  const parent = await sandbox.create({ seed: 1 });
  await app.write(gateway, parent, 1);
  setups.push({
    image,
    app,
    backend,
    sandbox,
    parent,
    forks: [] as number[],
    resets: [] as number[],
    fours: [] as number[],
    phases: [] as Record<string, number>[],
  });
}
for (let run = 0; run < RUNS; run++) {
  for (const s of setups) {
    const settle = () => s.backend.settle?.(s.sandbox) ?? Promise.resolve();
    const [fork, ms] = await timed(() => s.parent.fork!());
    s.forks.push(ms);
    const record = (fork as SharedRuntimeInstance).forked;
    if (record?.path !== "import") throw new Error(`${s.image}: a fork copied: ${record?.reason}`);
    s.phases.push(record.phases ?? {});
    await fork.destroy();
    await settle();
    const [, reset] = await timed(() => s.parent.reset());
    s.resets.push(reset);
    await settle();
    await s.app.write(gateway, s.parent, 1);
    if (run % 3 === 0) {
      const made: Instance[] = [];
      const [, four] = await timed(() =>
        Promise.all(Array.from({ length: 4 }, async () => made.push(await s.parent.fork!())))
      );
      s.fours.push(four);
      await Promise.all(made.map((f) => f.destroy()));
      await settle();
    }
  }
  progress(`run ${run + 1}/${RUNS}`);
}
const lines = [
  "# Forks on the shared runtime, two images side by side",
  "",
  `${started} · ${machine()} · load average ${loadBefore} at the start, ${
    loadAverage().join(", ")
  } at the end · \`deno run -A bench/fork_images.ts ${IMAGES.join(" ")} --out=${NAME}\``,
  "",
  `WordPress, one runtime of each image side by side, samples alternating between them: ${RUNS} forks of one`,
  `and ${RUNS} resets each, ${setups[0]!.fours.length} times 4 forks asked at once: \`${
    IMAGES[0]
  }\` before, \`${IMAGES[1]}\` after.`,
  "",
  ABOUT,
  "",
  "| image | fork p50 ms | fork p95 ms | reset p50 ms | fork ÷ reset | 4 forks p50 ms |",
  "| --- | ---: | ---: | ---: | ---: | ---: |",
];
for (const s of setups) {
  const fork = stats(s.forks), reset = stats(s.resets), four = stats(s.fours);
  lines.push(
    `| ${s.image} | ${fork.p50} | ${fork.p95} | ${reset.p50} | ${
      (fork.p50 / reset.p50).toFixed(2)
    } | ${four.p50} |`,
  );
}
lines.push(
  "",
  "The fork's steps in the control, p50 of ms from its start (the import's, for an image that reports no `spare` step; in the order they were reported):",
  "",
);
// Every step either image reports, in order; one an image does not take shows as –.
const steps = [...new Set(setups.flatMap((s) => Object.keys(s.phases[0] ?? {})))];
lines.push(`| image | ${steps.join(" | ")} |`, `| --- |${" ---: |".repeat(steps.length)}`);
for (const s of setups) {
  const p50 = (step: string) =>
    step in (s.phases[0] ?? {}) ? stats(s.phases.map((p) => p[step] ?? 0)).p50 : "–";
  lines.push(`| ${s.image} | ${steps.map(p50).join(" | ")} |`);
}
for (const s of setups) {
  await s.parent.destroy();
  await s.sandbox.close();
}
await Deno.writeTextFile(OUT, lines.join("\n") + "\n");
console.log(lines.join("\n"));
