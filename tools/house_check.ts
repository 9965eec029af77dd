/**
 * Refuses ticket, session and round numbers in the tree: a comment, test
 * name, script or page says what a thing does, not which ticket, working
 * session or review round asked for it (that is what the git history and
 * the changelog are for). Reads every tracked file (`git ls-files`) but
 * `deno.lock`, the generated bundles (`*_bundle.ts`, which hold third-party
 * code), its own test's examples and binary files, and names each hit as `file:line`.
 *
 * Run: `deno run --allow-read --allow-run tools/house_check.ts`; exits 1
 * when it finds any. `test/tools/house_check_test.ts` runs it in
 * `deno task test`.
 *
 * @module
 */

const ROOT = new URL("../", import.meta.url);

/** One pattern the tree must not hold, and why. */
export interface HousePattern {
  /** A short name for the report. */
  name: string;
  /** What matches. */
  pattern: RegExp;
}

/**
 * The patterns. `session` skips a duration or a size (`session 3 ms`, a
 * first session 10.3 s) and command-line flags (`--sessions 4`).
 */
export const HOUSE_PATTERNS: readonly HousePattern[] = [
  { name: "issue number", pattern: /\bissues?\s*#?\d+/i },
  {
    name: "session number",
    pattern:
      /(?<![-\w])sessions?[ -]\d+(?![\d.,]*\s*(?:ms|s|%|KiB|MiB|GiB|KB|MB|GB|bytes?|steps?|seconds?|minutes?)\b)/i,
  },
  { name: "round number", pattern: /\brounds?\s+\d+/i },
];

/**
 * Redmine's own issues are numbered (`issue #262`, `/issues/42`): in a
 * file about Redmine, or on a line naming it, an issue number is the
 * application's data, not a ticket.
 */
function redmineIssue(file: string, line: string): boolean {
  return /redmine/i.test(file) || /\bRedmine\b/.test(line);
}

/**
 * Files the check skips: the lockfile, generated bundles of third-party
 * code, and this check's own test, whose examples are what it must find.
 */
export function skipped(file: string): boolean {
  return file === "deno.lock" || /_bundle\.ts$/.test(file) ||
    file === "test/tools/house_check_test.ts";
}

/** One line that holds a ticket, session or round number. */
export interface HouseHit {
  /** The file, relative to the repository. */
  file: string;
  /** Its line, from 1. */
  line: number;
  /** Which pattern matched. */
  name: string;
  /** The matched text. */
  text: string;
}

/**
 * The hits in one file's text.
 *
 * @param file the file's path, relative to the repository
 * @param text its contents
 * @returns every hit, in line order
 */
export function findHits(file: string, text: string): HouseHit[] {
  const hits: HouseHit[] = [];
  const lines = text.split("\n");
  for (const [index, line] of lines.entries()) {
    for (const { name, pattern } of HOUSE_PATTERNS) {
      const match = line.match(pattern);
      if (!match) continue;
      if (name === "issue number" && redmineIssue(file, line)) continue;
      hits.push({ file, line: index + 1, name, text: match[0] });
    }
  }
  return hits;
}

/**
 * The tracked files of the repository.
 *
 * @returns their paths, relative to the repository
 * @throws {Error} when `git ls-files` fails (not a git checkout)
 */
export async function trackedFiles(): Promise<string[]> {
  const { success, stdout, stderr } = await new Deno.Command("git", {
    args: ["ls-files", "-z"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!success) {
    throw new Error(`git ls-files failed: ${new TextDecoder().decode(stderr).trim()}`);
  }
  return new TextDecoder().decode(stdout).split("\0").filter(Boolean);
}

/**
 * Checks every tracked file.
 *
 * @returns every hit, in file and line order
 */
export async function houseCheck(): Promise<HouseHit[]> {
  const hits: HouseHit[] = [];
  for (const file of await trackedFiles()) {
    if (skipped(file)) continue;
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(new URL(file, ROOT));
    } catch (error) {
      // Deleted in the work tree but not yet staged: nothing to read.
      if (error instanceof Deno.errors.NotFound) continue;
      throw error;
    }
    if (bytes.includes(0)) continue; // binary (images)
    hits.push(...findHits(file, new TextDecoder().decode(bytes)));
  }
  return hits;
}

/**
 * The report for a list of hits.
 *
 * @param hits the hits
 * @returns one line per hit, `file:line: name "text"`
 */
export function formatHits(hits: HouseHit[]): string {
  return hits.map((hit) => `${hit.file}:${hit.line}: ${hit.name} "${hit.text}"`).join("\n");
}

if (import.meta.main) {
  const hits = await houseCheck();
  if (hits.length === 0) {
    // deno-lint-ignore no-console
    console.log("house check: no ticket, session or round numbers");
    Deno.exit(0);
  }
  // deno-lint-ignore no-console
  console.error(
    `${formatHits(hits)}\n\n${hits.length} line(s) name a ticket, session or round: ` +
      "say what the thing does instead",
  );
  Deno.exit(1);
}
