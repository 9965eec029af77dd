// The python blocks of a markdown page (adapters/python/README.md, docs/python.md), for the
// tests that run them as written.
import { assert } from "@std/assert";

const README = new URL("../../../adapters/python/README.md", import.meta.url);

/**
 * The python blocks of a markdown page.
 *
 * @param page the page
 * @returns each block's code, in order
 */
export async function pythonBlocks(page: URL): Promise<string[]> {
  const text = await Deno.readTextFile(page);
  return [...text.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/**
 * The README's python blocks.
 *
 * @param ray whether to return the Ray blocks (else the others)
 * @returns their code
 */
export async function packageReadmeBlocks(ray: boolean): Promise<string[]> {
  return (await pythonBlocks(README)).filter((code) => code.includes("webserv.ray") === ray);
}

/**
 * Runs each block in turn with `python -c`, `WEBSERV_URL` set to the server, and fails on the
 * first that exits non-zero, with its code and its stderr.
 *
 * @param python the interpreter
 * @param blocks the code
 * @param url the server's URL
 * @param cwd where they run (a folder where the source is not importable tests the installed package)
 */
export async function assertBlocksRun(
  python: string,
  blocks: string[],
  url: string,
  cwd?: string,
): Promise<void> {
  for (const [index, code] of blocks.entries()) {
    const output = await new Deno.Command(python, {
      args: ["-c", code],
      ...(cwd === undefined ? {} : { cwd }),
      env: { WEBSERV_URL: url },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert(output.code === 0, `Block ${index + 1} failed:\n${code}\n${stderr}`);
  }
}
