import { assertEquals, assertThrows } from "@std/assert";
import { ActionError } from "../../../engine/act/errors.ts";
import { keyDefinition, modifierMask, parseChord } from "../../../engine/act/_keys.ts";

Deno.test("parseChord() splits modifiers from the key when the chord has several parts", () => {
  assertEquals(parseChord("Control+Shift+ArrowLeft").modifiers, ["Control", "Shift"]);
  assertEquals(parseChord("Control+Shift+ArrowLeft").key.code, "ArrowLeft");
  assertEquals(parseChord("ctrl+a").modifiers, ["Control"]);
  assertEquals(parseChord("ctrl+a").key, { key: "a", code: "KeyA", keyCode: 65, text: "a" });
  assertEquals(parseChord("Control++").key.key, "+");
  assertEquals(parseChord("Enter").modifiers, []);
});

Deno.test("parseChord() throws an ActionError naming the part when a name is unknown", () => {
  assertThrows(() => parseChord("Hyper+x"), ActionError, '"Hyper" in "Hyper+x" is not a modifier');
  assertThrows(() => parseChord("Control+Nope"), ActionError, 'unknown key "Nope"');
});

Deno.test("keyDefinition() and modifierMask() follow CDP when keys are common", () => {
  assertEquals(keyDefinition("Enter")?.text, "\r");
  assertEquals(keyDefinition("esc")?.key, "Escape");
  assertEquals(keyDefinition("7")?.code, "Digit7");
  assertEquals(keyDefinition("é"), undefined);
  assertEquals(modifierMask(["Alt", "Control", "Meta", "Shift"]), 15);
});
