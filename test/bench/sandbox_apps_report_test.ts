// The real-application report keeps the rows of applications a run does not
// measure (a BENCH_APPS=redmine run adds Redmine's rows to MediaWiki's and
// WordPress's), and the hand-written notes only while every row they were
// written beside is kept.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import {
  type AppResult,
  keptFrom,
  markdown,
  type RunMeta,
  type SavedReport,
} from "../../bench/_sandbox_apps_report.ts";

const STATS = { n: 1, p50: 1, p95: 1, min: 1, max: 1, mean: 1 };

function result(app: string, backend: string): AppResult {
  return {
    app,
    backend,
    label: `${app} on ${backend}`,
    launchReadyMs: STATS,
    launchFirstWriteMs: STATS,
    firstWriteMs: STATS,
    resetMs: STATS,
    storagePerEnvMiB: STATS,
    pssPerEnvMiB: STATS,
    rssPerEnvMiB: STATS,
    cgroupPerEnvMiB: STATS,
    processesPerEnv: 6,
    failures: [],
    capacity: { ready: 20, stoppedBecause: "reached the cap of 20", seconds: 1 },
  };
}

function meta(apps: string[], startedAt: string): RunMeta {
  return {
    startedAt,
    finishedAt: startedAt,
    loadBefore: [1, 2, 3],
    loadAfter: [3, 2, 1],
    machine: "a test",
    apps,
    settings: {
      launches: 5,
      resets: 5,
      cap: 20,
      minFreeDisk: 1,
      minFreePool: 1,
      minFreeMemory: 1,
    },
  };
}

const SAVED: SavedReport = {
  meta: meta(["mediawiki", "wordpress"], "2026-12-02T07:38:05Z"),
  results: ["mediawiki", "wordpress"].flatMap((app) =>
    ["incus-btrfs", "docker"].map((backend) => result(app, backend))
  ),
};
const MD = "# Sandbox benchmark\n\n| rows |\n\n## Notes on this run (by hand)\n\n- a note\n";

Deno.test("keptFrom() keeps every other application's rows and the notes when a run measures a new one", () => {
  const earlier = keptFrom(SAVED, MD, ["redmine"]);
  assertEquals(earlier.runs.length, 1);
  assertEquals(earlier.runs[0]?.results.map((r) => r.app), [
    "mediawiki",
    "mediawiki",
    "wordpress",
    "wordpress",
  ]);
  assertEquals(earlier.notes, "## Notes on this run (by hand)\n\n- a note\n");
  const md = markdown([result("redmine", "incus-btrfs"), result("redmine", "docker")], {
    ...meta(["redmine"], "2026-12-02T13:00:00Z"),
  }, earlier);
  for (const app of ["mediawiki", "wordpress", "redmine"]) {
    assertStringIncludes(md, `| ${app} on incus-btrfs |`);
    assertStringIncludes(md, `- ${app}: Incus launch→ready`);
  }
  assertStringIncludes(
    md,
    "The rows of mediawiki, wordpress are kept from an earlier run, 2026-12-02T07:38:05Z",
  );
  assert(md.trimEnd().endsWith("- a note"), "the notes stay at the end");
});

Deno.test("keptFrom() drops a re-measured application's rows and the notes written beside them", () => {
  const earlier = keptFrom(SAVED, MD, ["wordpress"]);
  assertEquals(earlier.runs[0]?.results.map((r) => r.app), ["mediawiki", "mediawiki"]);
  assertEquals(earlier.notes, "");
});

Deno.test("keptFrom() carries rows an earlier report itself kept, by the run that measured them", () => {
  const second: SavedReport = {
    meta: meta(["redmine"], "2026-12-02T13:00:00Z"),
    results: [result("redmine", "docker")],
    earlier: keptFrom(SAVED, MD, ["redmine"]).runs,
  };
  const earlier = keptFrom(second, MD, ["mediawiki"]);
  assertEquals(
    earlier.runs.map((run) => [run.meta.startedAt, run.results.map((r) => r.app)]),
    [
      ["2026-12-02T13:00:00Z", ["redmine"]],
      ["2026-12-02T07:38:05Z", ["wordpress", "wordpress"]],
    ],
  );
});

Deno.test("keptFrom() keeps a measured application's other backends when BENCH_APP_BACKENDS chose some", () => {
  const earlier = keptFrom(SAVED, MD, ["wordpress"], ["shared", "shared-cold", "docker"]);
  assertEquals(
    earlier.runs[0]?.results.map((r) => `${r.app} ${r.backend}`),
    ["mediawiki incus-btrfs", "mediawiki docker", "wordpress incus-btrfs"],
  );
  assertEquals(earlier.notes, "", "a row the notes were written beside is re-measured");
  const md = markdown([result("wordpress", "shared")], {
    ...meta(["wordpress"], "2026-12-02T16:00:00Z"),
    backends: ["shared", "shared-cold", "docker"],
  }, earlier);
  assertStringIncludes(md, "`BENCH_APPS=wordpress BENCH_APP_BACKENDS=shared,shared-cold,docker");
  assertStringIncludes(md, "| wordpress on incus-btrfs |");
});
