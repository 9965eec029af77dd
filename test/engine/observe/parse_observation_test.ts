import { assertEquals } from "@std/assert";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { describeElement, formatNodes } from "../../../engine/observe/format_observation.ts";
import { parseElements } from "../../../engine/observe/parse_observation.ts";
import type { TreeElement } from "../../../engine/observe/tree.ts";
import { HARD_ELEMENTS, JOINED_TREE } from "./_observation_cases.ts";

Deno.test("parseElements() reads back the role, name and target describeElement() wrote", () => {
  for (const el of HARD_ELEMENTS) {
    const line = describeElement(el);
    const [found] = parseElements(line);
    const name = (el.name ?? "").replace(/"/g, "'");
    const shown = el.href && !el.quietHref ? el.href : undefined;
    assertEquals(
      { id: found?.id, role: found?.role, name: found?.name, href: found?.href },
      { id: el.id, role: el.role, name, href: shown },
      line,
    );
  }
});

Deno.test("parseElements() finds every element of joined lines, rows and links in sentences", () => {
  const text = formatNodes(JOINED_TREE).join("\n");
  const found = parseElements(text).map(({ id, role, name, href }) => ({ id, role, name, href }));
  assertEquals(found, [
    { id: 1, role: "link", name: "Mira", href: "/authors/mira" },
    { id: 2, role: "link", name: "#1000", href: "/orders/1000" },
    { id: 3, role: "button", name: "View", href: undefined },
    { id: 4, role: "button", name: "Share", href: undefined },
    { id: 5, role: "button", name: "Plan Free", href: undefined },
    { id: 6, role: "button", name: "Follow", href: undefined },
  ], text);
});

Deno.test("describeElement() quotes a name only where a reader could cut it wrong", () => {
  assertEquals(describeElement({ k: "e", id: 1, role: "button", name: "Save" }), "[1] button Save");
  assertEquals(
    describeElement({ k: "e", id: 2, role: "link", name: "Docs", href: "/docs" }),
    "[2] Docs → /docs",
  );
  assertEquals(
    describeElement({ k: "e", id: 3, role: "switch", name: "Email", states: ["checked"] }),
    '[3] switch "Email" checked',
  );
  // A link inside a sentence runs into the words after it: quoted.
  const sentence = formatNodes([{
    k: "e",
    role: "",
    c: [
      { k: "t", t: "told the" },
      { k: "e", id: 4, role: "link", name: "council", href: "#/council", inline: true },
      { k: "t", t: ", to laughter." },
    ],
  }]);
  assertEquals(sentence, ['told the [4] "council" → #/council , to laughter.']);
});

Deno.test("describeElement() spends fewer tokens on a link and a button than quoted names with role words", () => {
  const link: TreeElement = {
    k: "e",
    id: 558,
    role: "link",
    name: "Getting topic 1",
    href: "#/0/0",
  };
  const button: TreeElement = { k: "e", id: 559, role: "button", name: "Add to cart" };
  const before = encode('[558] link "Getting topic 1" → #/0/0\n[559] button "Add to cart"').length;
  const after = encode(`${describeElement(link)}\n${describeElement(button)}`).length;
  assertEquals(before - after, 5, `${before} → ${after}`);
});
