import { assertEquals, assertThrows } from "@std/assert";
import { ActionError } from "../../../engine/act/errors.ts";
import { ACTION_NAMES, ACTION_SCHEMA, ACTIONS, parseAction } from "../../../engine/act/action.ts";
import { TYPE_MAX_LENGTH } from "../../../engine/act/_typing.ts";

Deno.test("parseAction() returns the action when the input is valid", () => {
  assertEquals(parseAction({ action: "click", id: 3 }), { action: "click", id: 3 });
  assertEquals(
    parseAction({ action: "type", id: 1, text: "hi", mode: "append", enter: true }).action,
    "type",
  );
  assertEquals(parseAction({ action: "scroll", direction: "down" }).action, "scroll");
  assertEquals(parseAction({ action: "stop", answer: "42" }).action, "stop");
});

Deno.test("parseAction() throws an ActionError naming the field when the input is invalid", () => {
  assertThrows(() => parseAction("click"), ActionError, "expected an object");
  assertThrows(() => parseAction({ action: "jump" }), ActionError, '"action" must be one of');
  assertThrows(() => parseAction({ action: "click" }), ActionError, '"id" is required');
  assertThrows(
    () => parseAction({ action: "click", id: 0 }),
    ActionError,
    '"id" must be a positive integer, got 0',
  );
  assertThrows(
    () => parseAction({ action: "click", id: 1, x: 2 }),
    ActionError,
    'unknown field "x"',
  );
  assertThrows(
    () => parseAction({ action: "type", id: 1, text: 5 }),
    ActionError,
    '"text" must be a string',
  );
  assertThrows(() => parseAction({ action: "scroll" }), ActionError, 'give "direction"');
  assertThrows(() => parseAction({ action: "drag", id: 1 }), ActionError, 'give "to"');
  assertThrows(
    () => parseAction({ action: "drag", id: 1, to: 2, dx: 5 }),
    ActionError,
    "not both",
  );
  assertThrows(() => parseAction({ action: "upload", id: 1, files: [] }), ActionError, '"files"');
  assertThrows(
    () => parseAction({ action: "click", id: 1, modifiers: ["Hyper"] }),
    ActionError,
    '"modifiers"',
  );
});

Deno.test("ACTION_SCHEMA has one variant per action when listed", () => {
  const variants = ACTION_SCHEMA.oneOf as { properties: { action: { const: string } } }[];
  assertEquals(variants.map((variant) => variant.properties.action.const), [...ACTION_NAMES]);
});

Deno.test("the action space is declared once: the schema's constraints are the parser's", () => {
  // uniqueItems was in the schema and never enforced; the parser now reads it from the same place.
  const variants = ACTION_SCHEMA.oneOf as { properties: Record<string, Record<string, unknown>> }[];
  const click = variants[ACTION_NAMES.indexOf("click")]!;
  assertEquals(click.properties.modifiers!.uniqueItems, true);
  const error = assertThrows(
    () => parseAction({ action: "click", id: 1, modifiers: ["Alt", "Alt"] }),
    ActionError,
    '"modifiers" must be a list of Alt, Control, Meta, Shift, each once',
  );
  assertEquals(error.code, "invalid-action");
  // The cap in the description is the typing cap, not a literal.
  const type = variants[ACTION_NAMES.indexOf("type")]!;
  assertEquals(type.properties.text!.description, `At most ${TYPE_MAX_LENGTH} characters`);
  assertEquals(click.properties.id, {
    type: "integer",
    minimum: 1,
    description: "Element id from the observation",
  });
  // Each action's schema parses its own action and no other.
  for (const name of ["back", "forward", "reload"] as const) {
    assertEquals(ACTIONS[name].safeParse({ action: name }).success, true);
    assertEquals(ACTIONS[name].safeParse({ action: "stop" }).success, false);
  }
});
