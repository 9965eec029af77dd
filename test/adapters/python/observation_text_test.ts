// The Python client's reader of an observation's text (webserv.observation_text) against the
// engine's (parseElements): the same text, read by both, gives the same elements.
import { assertEquals } from "@std/assert";
import { describeElement, formatNodes } from "../../../engine/observe/format_observation.ts";
import { parseElements } from "../../../engine/observe/parse_observation.ts";
import { HARD_ELEMENTS, JOINED_TREE, PAGE_TREE } from "../../engine/observe/_observation_cases.ts";
import { venvPython } from "./_venv.ts";

const SOURCE = new URL("../../../adapters/python/webserv/observation_text.py", import.meta.url)
  .pathname;

/** Runs `webserv.observation_text.parse_elements()` on each text, in one Python process. */
async function parsedByPython(texts: string[]): Promise<unknown[]> {
  const script = [
    "import importlib.util, json, sys",
    `spec = importlib.util.spec_from_file_location("observation_text", ${JSON.stringify(SOURCE)})`,
    "module = importlib.util.module_from_spec(spec)",
    "spec.loader.exec_module(module)",
    "print(json.dumps([module.parse_elements(text) for text in json.load(sys.stdin)]))",
  ].join("\n");
  const child = new Deno.Command(venvPython(), {
    args: ["-c", script],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(JSON.stringify(texts)));
  await writer.close();
  const output = await child.output();
  assertEquals(output.code, 0, new TextDecoder().decode(output.stderr));
  return JSON.parse(new TextDecoder().decode(output.stdout));
}

Deno.test("webserv.observation_text.parse_elements() reads an observation's text as parseElements() does", async () => {
  const page = formatNodes(PAGE_TREE).join("\n");
  assertEquals(parseElements(page).length, 14, page);
  // The engine's own read-back cases, each read by both.
  const texts = [
    page,
    formatNodes(JOINED_TREE).join("\n"),
    ...HARD_ELEMENTS.map((el) => describeElement(el)),
  ];
  const python = await parsedByPython(texts);
  texts.forEach((text, i) => {
    assertEquals(python[i], JSON.parse(JSON.stringify(parseElements(text))), text);
  });
});
