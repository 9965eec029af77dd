// The Python client's reader of an observation's text (webserv.observation_text) against the
// engine's (parseElements): the same text, read by both, gives the same elements.
import { assertEquals } from "@std/assert";
import { formatNodes } from "../../../engine/observe/format_observation.ts";
import { parseElements } from "../../../engine/observe/parse_observation.ts";
import type { TreeNode } from "../../../engine/observe/tree.ts";
import { venvPython } from "./_venv.ts";

const SOURCE = new URL("../../../adapters/python/webserv/observation_text.py", import.meta.url)
  .pathname;

/** A page's worth of lines with every way a name and a role are written. */
const TREE: TreeNode[] = [
  {
    k: "e",
    role: "banner",
    c: [
      { k: "e", id: 1, role: "link", name: "Shop", href: "/" },
      { k: "e", id: 2, role: "searchbox", name: "Search products" },
      { k: "e", id: 3, role: "link", name: "Cart (0)", href: "/cart", quietHref: true },
    ],
  },
  {
    k: "e",
    role: "main",
    c: [
      { k: "e", role: "heading", name: "Deals" },
      { k: "t", t: "Read the" },
      { k: "e", id: 4, role: "link", name: "terms", href: "/terms", inline: true },
      { k: "t", t: "first." },
      {
        k: "e",
        role: "",
        c: [
          { k: "e", id: 5, role: "link", name: "Blue T-Shirt", href: "/p/1" },
          { k: "t", t: "$19.99" },
          { k: "e", id: 6, role: "button", name: "Add Blue T-Shirt to cart" },
        ],
      },
      { k: "e", id: 7, role: "checkbox", name: "Gift wrap", states: ["checked"] },
      { k: "e", id: 8, role: "combobox", name: "Sort", value: "Price", options: ["Price", "Name"] },
      { k: "e", id: 9, role: "button", name: 'Say "hi" · now' },
      { k: "e", id: 10, role: "link", name: "menu", href: "/menu" },
      { k: "e", id: 11, role: "link", href: "/icon" },
      { k: "e", id: 12, role: "", name: "Plain clickable" },
      {
        k: "e",
        role: "table",
        c: [{
          k: "e",
          role: "row",
          c: [
            { k: "e", id: 13, role: "link", name: "#1000", href: "/orders/1000" },
            { k: "e", role: "cell", name: "Paid" },
            { k: "e", id: 14, role: "button", name: "View" },
          ],
        }],
      },
    ],
  },
];

Deno.test("webserv.observation_text.parse_elements() reads an observation's text as parseElements() does", async () => {
  const text = formatNodes(TREE).join("\n");
  const script = [
    "import importlib.util, json, sys",
    `spec = importlib.util.spec_from_file_location("observation_text", ${JSON.stringify(SOURCE)})`,
    "module = importlib.util.module_from_spec(spec)",
    "spec.loader.exec_module(module)",
    "print(json.dumps(module.parse_elements(sys.stdin.read())))",
  ].join("\n");
  const child = new Deno.Command(venvPython(), {
    args: ["-c", script],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const output = await child.output();
  assertEquals(output.code, 0, new TextDecoder().decode(output.stderr));
  const python = JSON.parse(new TextDecoder().decode(output.stdout));
  const deno = parseElements(text);
  assertEquals(deno.length, 14, text);
  assertEquals(python, JSON.parse(JSON.stringify(deno)), text);
});
