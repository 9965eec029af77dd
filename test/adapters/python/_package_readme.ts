// The python blocks of adapters/python/README.md, for the tests that run them.

const README = new URL("../../../adapters/python/README.md", import.meta.url);

/**
 * The README's python blocks.
 *
 * @param ray whether to return the Ray blocks (else the others)
 * @returns their code
 */
export async function packageReadmeBlocks(ray: boolean): Promise<string[]> {
  const text = await Deno.readTextFile(README);
  return [...text.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]!)
    .filter((code) => code.includes("webserv.ray") === ray);
}
