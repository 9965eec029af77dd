/**
 * Observation lines that are hard to read back, written once for every
 * reader of an observation's text: the engine's `parseElements()`
 * (`parse_observation_test.ts`) and the Python client's
 * `webserv.observation_text` (`test/adapters/python/observation_text_test.ts`),
 * which must read each of them as the engine does.
 *
 * @module
 */
import type { TreeElement, TreeNode } from "../../../engine/observe/tree.ts";

/** Elements whose names are hard to read back: separators, quotes, ids, arrows, role words. */
export const HARD_ELEMENTS: TreeElement[] = [
  { k: "e", id: 1, role: "button", name: "Save" },
  { k: "e", id: 2, role: "link", name: "Docs", href: "/docs/start" },
  { k: "e", id: 3, role: "link", name: "menu", href: "/menu" },
  { k: "e", id: 4, role: "link", name: "Changelog", href: "/changelog", quietHref: true },
  { k: "e", id: 5, role: "checkbox", name: "Remember me", states: ["checked"] },
  { k: "e", id: 6, role: "button", name: 'Say "hi"' },
  { k: "e", id: 7, role: "button", name: "Prev · Next" },
  { k: "e", id: 8, role: "link", name: "A → B", href: "/ab" },
  { k: "e", id: 9, role: "button", name: "[12] fake id" },
  { k: "e", id: 10, role: "textbox", name: "Query", value: "a → b · c" },
  { k: "e", id: 11, role: "button" },
  { k: "e", id: 12, role: "link", href: "/nameless" },
  { k: "e", id: 13, role: "", name: "Plain clickable" },
  { k: "e", id: 14, role: "link", name: "Title", href: "/t", description: "Open the title" },
  { k: "e", id: 15, role: "combobox", name: "Sort", value: "Featured", options: ["A", "B"] },
  { k: "e", id: 16, role: "link", name: " padded" },
  { k: "e", id: 17, role: "button", name: "status: done" },
  { k: "e", id: 18, role: "menuitem", name: "Array[0] view" },
];

/** A table row joined on one line: a link, a cell and a button, ids from `first`. */
function orderRow(first: number): TreeNode {
  return {
    k: "e",
    role: "table",
    c: [{
      k: "e",
      role: "row",
      c: [
        { k: "e", id: first, role: "link", name: "#1000", href: "/orders/1000" },
        { k: "e", role: "cell", name: "Paid" },
        { k: "e", id: first + 1, role: "button", name: "View" },
      ],
    }],
  };
}

/**
 * Lines that join several elements: a link inside a sentence, a table row,
 * a heading holding a button, a group with text before its buttons (ids 1 to 6).
 */
export const JOINED_TREE: TreeNode[] = [{
  k: "e",
  role: "main",
  c: [
    { k: "t", t: "By" },
    { k: "e", id: 1, role: "link", name: "Mira", href: "/authors/mira", inline: true },
    { k: "t", t: "· 1 December" },
    orderRow(2),
    {
      k: "e",
      role: "heading",
      name: "Overview",
      c: [{ k: "e", id: 4, role: "button", name: "Share" }],
    },
    {
      k: "e",
      role: "",
      c: [
        { k: "t", t: "Plan" },
        { k: "e", id: 5, role: "button", name: "Plan Free", states: ["collapsed"] },
        { k: "e", id: 6, role: "button", name: "Follow" },
      ],
    },
  ],
}];

/** A page's worth of lines with every way a name and a role are written (ids 1 to 14). */
export const PAGE_TREE: TreeNode[] = [
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
      orderRow(13),
    ],
  },
];
