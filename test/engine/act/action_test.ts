import { assertEquals, assertThrows } from "@std/assert";
import { ACTION_NAMES, ACTION_SCHEMA, parseAction } from "../../../engine/act/action.ts";

Deno.test("parseAction() returns the action when the input is valid", () => {
  assertEquals(parseAction({ action: "click", id: 3 }), { action: "click", id: 3 });
  assertEquals(
    parseAction({ action: "type", id: 1, text: "hi", mode: "append", enter: true }).action,
    "type",
  );
  assertEquals(parseAction({ action: "scroll", direction: "down" }).action, "scroll");
  assertEquals(parseAction({ action: "stop", answer: "42" }).action, "stop");
});

Deno.test("parseAction() throws a TypeError naming the field when the input is invalid", () => {
  assertThrows(() => parseAction("click"), TypeError, "expected an object");
  assertThrows(() => parseAction({ action: "jump" }), TypeError, '"action" must be one of');
  assertThrows(() => parseAction({ action: "click" }), TypeError, '"id" is required');
  assertThrows(
    () => parseAction({ action: "click", id: 0 }),
    TypeError,
    '"id" must be a positive integer, got 0',
  );
  assertThrows(() => parseAction({ action: "click", id: 1, x: 2 }), TypeError, 'unknown field "x"');
  assertThrows(
    () => parseAction({ action: "type", id: 1, text: 5 }),
    TypeError,
    '"text" must be a string',
  );
  assertThrows(() => parseAction({ action: "scroll" }), TypeError, 'give "direction"');
  assertThrows(() => parseAction({ action: "upload", id: 1, files: [] }), TypeError, '"files"');
  assertThrows(
    () => parseAction({ action: "click", id: 1, modifiers: ["Hyper"] }),
    TypeError,
    '"modifiers"',
  );
});

Deno.test("ACTION_SCHEMA has one variant per action when listed", () => {
  const variants = ACTION_SCHEMA.oneOf as { properties: { action: { const: string } } }[];
  assertEquals(variants.map((variant) => variant.properties.action.const), [...ACTION_NAMES]);
});
