// The public entry point as a user meets it: the README's example runs as
// written, from a folder outside the repository, with a plain import of
// mod.ts by file URL and no deno.json of ours (no import map to borrow).
import { assertEquals, assertStringIncludes } from "@std/assert";

const MOD = new URL("../mod.ts", import.meta.url).href;

/** The first TypeScript block of the README's "A first episode" section. */
async function readmeExample(): Promise<string> {
  const readme = await Deno.readTextFile(new URL("../README.md", import.meta.url));
  const use = readme.slice(readme.indexOf("## A first episode"));
  const match = use.match(/```ts\n([\s\S]*?)```/);
  if (!match?.[1]) throw new Error('The README has no TypeScript example under "A first episode"');
  return match[1];
}

/** Runs `deno <subcommand> main.ts` on `source` in a fresh folder outside the repo. */
async function runOutside(
  subcommand: "run" | "check",
  source: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const dir = await Deno.makeTempDir({ prefix: "webserv-outside-" });
  try {
    await Deno.writeTextFile(`${dir}/main.ts`, source);
    const permissions = subcommand === "run" ? ["--allow-all"] : [];
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [subcommand, ...permissions, "--no-config", "--no-lock", "main.ts"],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decoder = new TextDecoder();
    return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("mod.ts type-checks and runs the README example when imported by file URL from outside the repo", async () => {
  const example = await readmeExample();
  assertStringIncludes(example, `from "@webserv/webserv"`);
  const source = example.replaceAll(`"@webserv/webserv"`, JSON.stringify(MOD));
  const checked = await runOutside("check", source);
  assertEquals(checked.code, 0, `the example does not type-check:\n${checked.stderr}`);
  const { code, stdout, stderr } = await runOutside("run", source);
  assertEquals(code, 0, `the example failed:\n${stderr}`);
  assertStringIncludes(stdout, "[1] button Remove");
  assertStringIncludes(stdout, "settled: true");
});

Deno.test("mod.ts exports the public names and none of the internals", async () => {
  const mod: Record<string, unknown> = await import(MOD);
  for (const name of ["Browser", "Env", "EnvError", "ActionError", "parseAction", "actionTools"]) {
    assertEquals(name in mod, true, `"${name}" is not exported`);
  }
  for (
    const name of [
      // the engine beneath the loop has its own entry point (`./engine`)
      "Observer",
      "Actor",
      "Settler",
      "findElement",
      "FRAME_MARK",
      "formatNodes",
      "describeElement",
      "DEFAULT_FLAGS",
      "WORLD_NAME",
      "OBJECT_GROUP",
      "drawMarks",
      // the engine beneath an Env and a Browser (`envInternals`, `browserInternals`)
      "envInternals",
      "browserInternals",
      "newContext",
      "BrowserContext",
      "Page",
      "Connection",
    ]
  ) {
    assertEquals(name in mod, false, `the internal "${name}" is exported`);
  }
});

// The root names what an agent loop calls and the data types their signatures
// reference (so its documentation stands alone); the engine's classes stay in
// ./engine. 64 leaves room for a few more options, not for the engine.
Deno.test("mod.ts exports at most 64 names, and ./engine the engine beneath them", async () => {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", "mod.ts"],
    cwd: new URL("../", import.meta.url),
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(code, 0, new TextDecoder().decode(stderr));
  const doc = JSON.parse(new TextDecoder().decode(stdout)) as {
    nodes: Record<string, { symbols: { name: string }[] }>;
  };
  const names = Object.values(doc.nodes).flatMap((node) => node.symbols.map((s) => s.name));
  assertEquals(
    names.length <= 64,
    true,
    `mod.ts exports ${names.length} names: ${names.join(", ")}`,
  );
  assertEquals(names.includes("Env") && names.includes("Browser"), true);
  const engine: Record<string, unknown> = await import(
    new URL("../engine/mod.ts", import.meta.url).href
  );
  for (
    const name of [
      "Env",
      "Browser",
      "Observer",
      "Actor",
      "Settler",
      "findElement",
      "envInternals",
      "browserInternals",
      "newContext",
    ]
  ) {
    assertEquals(name in engine, true, `"${name}" is not exported by ./engine`);
  }
});

Deno.test("deno doc --lint passes on every entry point in deno.json exports", async () => {
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-run", "tools/doc_lint.ts"],
    cwd: new URL("../", import.meta.url),
    stdout: "null",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(stderr);
  assertEquals(
    code,
    0,
    text.split("\n").filter((line) => line.includes("error")).slice(0, 20).join("\n"),
  );
});
