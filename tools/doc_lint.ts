/**
 * Runs `deno doc --lint` over every entry point listed under `exports` in
 * `deno.json`: once over all of them together, then over each alone, as
 * JSR documents each entry point on a page of its own (a type that one entry
 * point references and only another exports passes the first run, not the
 * second). A new entry point is linted without touching CI. Used by
 * `deno task doc:lint`.
 *
 * @module
 */
const config = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url)));
const entries = Object.values(config.exports as Record<string, string>);

/** Runs `deno doc --lint` on `paths`, its report on this process's stdout and stderr. */
async function lint(paths: string[]): Promise<boolean> {
  const { success } = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--lint", ...paths],
    cwd: new URL("../", import.meta.url),
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  return success;
}

const failed: string[] = [];
if (!await lint(entries)) failed.push("all entry points together");
for (const entry of entries) {
  if (!await lint([entry])) failed.push(entry);
}
if (failed.length > 0) {
  console.error(`deno doc --lint failed on: ${failed.join(", ")}`);
  Deno.exit(1);
}
