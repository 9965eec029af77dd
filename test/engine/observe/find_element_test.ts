import { assertEquals } from "@std/assert";
import { findElement, findElements } from "../../../engine/observe/find_element.ts";
import type { ObservedElement } from "../../../engine/observe/observation.ts";

function element(id: number, role: string, name: string): ObservedElement {
  return {
    id,
    role,
    name,
    states: [],
    cues: [],
    box: [0, 0, 1, 1],
    frame: "F",
    inViewport: true,
    isNew: false,
  };
}

const observation = {
  elements: [
    element(1, "link", "Home"),
    element(2, "button", "Add  to\ncart"),
    element(3, "button", "Add to wishlist"),
    element(4, "link", "Cart (2)"),
  ],
};

Deno.test("findElements() matches role and a case-free substring of the name by default", () => {
  const ids = (query: Parameters<typeof findElements>[1]) =>
    findElements(observation, query).map((el) => el.id);
  assertEquals(ids({ role: "button", name: "add to" }), [2, 3]);
  assertEquals(ids({ name: "cart" }), [2, 4]);
  assertEquals(ids({ role: "link" }), [1, 4]);
  assertEquals(ids({ name: /^Cart \(\d+\)$/ }), [4]);
  assertEquals(ids({ role: "checkbox" }), []);
});

Deno.test("findElement() matches the whole name with its case when exact", () => {
  assertEquals(
    findElement(observation, { role: "button", name: "Add to cart", exact: true })?.id,
    2,
  );
  assertEquals(findElement(observation, { name: "add to cart", exact: true }), undefined);
  assertEquals(findElement(observation, { name: "Add to", exact: true }), undefined);
});
