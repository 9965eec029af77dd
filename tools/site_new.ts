/**
 * `deno task site:new NAME [--title TITLE]`: scaffolds a recreated site that
 * passes the site checker as generated, for a person or a generator (an LLM
 * in VeriEnv's pipeline) to grow. It writes `fixtures/sites/NAME/mod.ts` (the
 * seed, the public app, the state app, the view reader, the harmless
 * declaration and three templates with their solvers: information,
 * navigation, state), its `README.md` and `test/fixtures/sites/NAME/NAME_test.ts`
 * (valid tasks, and `checkSite` on one seed), and registers the site in
 * `fixtures/sites/registry.ts`. Then `deno task site:readme NAME` and
 * `deno task site:check NAME --seeds 3`.
 *
 * The contract a site meets (the README's "Sites and tasks"): a `SiteModule`
 * whose tracked tables the state app hashes and diffs; every template draws
 * its task from the seed over the seeded data, names a closed-set evaluator,
 * and has a solver that wins through the public observation and actions
 * only; `view` reads the pages its URL tasks name as its router does;
 * `harmless` lists what an agent may change without harm.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { NAME_PATTERN } from "../fixtures/sites/kit/task.ts";

/** The files a scaffold writes, relative to the repository. */
export interface Scaffold {
  /** The site module. */
  site: string;
  /** Its test. */
  test: string;
  /** Its README, whose templates table `deno task site:readme` fills. */
  readme: string;
}

/**
 * Writes a new site and registers it.
 *
 * @param root the repository's root
 * @param name the site's name, lowercase, a letter first
 * @param title its display name
 * @returns the files written
 * @throws {TypeError} when the name is not a site name or the site exists
 */
export async function scaffoldSite(root: URL, name: string, title: string): Promise<Scaffold> {
  if (!NAME_PATTERN.test(name)) {
    throw new TypeError(`Invalid site name "${name}": expected lowercase letters, digits, - or _`);
  }
  const files: Scaffold = {
    site: `fixtures/sites/${name}/mod.ts`,
    test: `test/fixtures/sites/${name}/${name}_test.ts`,
    readme: `fixtures/sites/${name}/README.md`,
  };
  const exists = await Deno.stat(new URL(files.site, root)).then(() => true, () => false);
  if (exists) throw new TypeError(`Site "${name}" exists already: ${files.site}`);
  const fill = (text: string) => text.replaceAll("__NAME__", name).replaceAll("__TITLE__", title);
  const templates = [
    [files.site, "site.ts.tpl"],
    [files.test, "test.ts.tpl"],
    [files.readme, "README.md.tpl"],
  ];
  for (const [file, template] of templates) {
    const text = await Deno.readTextFile(new URL(`site_new/${template}`, import.meta.url));
    await Deno.mkdir(new URL(".", new URL(file as string, root)), { recursive: true });
    await Deno.writeTextFile(new URL(file as string, root), fill(text));
  }
  const registry = new URL("fixtures/sites/registry.ts", root);
  const source = await Deno.readTextFile(registry);
  const id = name.replace(/[-_](\w)/gu, (_, c: string) => c.toUpperCase());
  const imports = [...source.matchAll(/^import \w+ from "\.\/\w[\w-]*\/mod\.ts";$/gmu)];
  const last = imports[imports.length - 1];
  // The new site goes at the end of SITES (the sites the fixture backend serves).
  const close = source.indexOf("});", source.indexOf("export const SITES"));
  if (!last || close < 0) {
    throw new TypeError("Cannot register the site: registry.ts has changed shape");
  }
  const at = (last.index ?? 0) + last[0].length;
  const registered = source.slice(0, at) + `\nimport ${id} from "./${name}/mod.ts";` +
    source.slice(at, close) + `  [${id}.name]: ${id},\n` + source.slice(close);
  await Deno.writeTextFile(registry, registered);
  const fmt = await new Deno.Command(Deno.execPath(), {
    args: ["fmt", files.site, files.test, "fixtures/sites/registry.ts"],
    cwd: root,
    stdout: "null",
    stderr: "inherit",
  }).output();
  if (!fmt.success) throw new Error("deno fmt failed on the scaffold");
  return files;
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    allowPositionals: true,
    options: { title: { type: "string" } },
  });
  const name = positionals[0] ?? "";
  try {
    const title = values.title ?? `${name.charAt(0).toUpperCase()}${name.slice(1)}`;
    const files = await scaffoldSite(new URL("../", import.meta.url), name, title);
    console.log(`Wrote ${files.site}, ${files.readme} and ${files.test}, registered "${name}".`);
    console.log(`Next: deno task site:readme ${name}, then deno task site:check ${name} --seeds 3`);
  } catch (error) {
    console.error((error as Error).message);
    Deno.exit(2);
  }
}
