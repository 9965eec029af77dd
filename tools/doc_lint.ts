/**
 * Runs `deno doc --lint` once over every entry point listed under `exports`
 * in `deno.json`, so a new entry point is linted without touching CI. Used by
 * `deno task doc:lint`.
 *
 * @module
 */
const config = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url)));
const entries = Object.values(config.exports as Record<string, string>);
const { code } = await new Deno.Command(Deno.execPath(), {
  args: ["doc", "--lint", ...entries],
  cwd: new URL("../", import.meta.url),
  stdout: "inherit",
  stderr: "inherit",
}).spawn().status;
Deno.exit(code);
