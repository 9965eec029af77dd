/**
 * Helpers of the dashboard tests: a page condition waited for with a bound,
 * and the demo add-note task solved through the HTTP client.
 *
 * @module
 */
import { assertEquals } from "@std/assert";
import type { Env } from "../../../mod.ts";
import type { WebServClient } from "../../../adapters/client/mod.ts";

/**
 * Evaluates an expression in the page until `check` holds, for at most 10 s.
 *
 * @param env the Env whose page shows the dashboard
 * @param expression JavaScript evaluated in the page
 * @param check whether the value is the one waited for
 * @returns the first value that passed `check`
 * @throws Error naming the expression, its last value and the page's text
 */
export async function until<T>(
  env: Env,
  expression: string,
  check: (value: T) => boolean,
): Promise<T> {
  let value: T | undefined;
  for (let i = 0; i < 100; i++) {
    value = await env.evaluate(expression) as T;
    if (check(value)) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  const page = await env.evaluate("document.body.innerText").catch(() => "");
  throw new Error(`Never held: ${expression} gave ${JSON.stringify(value)}\n${page}`);
}

/**
 * The id of the first element whose observation line matches.
 *
 * @param text an observation's text
 * @param pattern what the element's line holds
 * @returns the element's id
 * @throws Error when no line matches
 */
export function idOf(text: string, pattern: RegExp): number {
  const match = text.split("\n").find((l) => pattern.test(l))?.match(/\[(\d+)\]/);
  if (!match) throw new Error(`No element ${pattern} in:\n${text}`);
  return Number(match[1]);
}

/**
 * Adds the demo add-note task's note and stops: reward 1, three steps.
 *
 * @param client the client of the server running the session
 * @param id the session id
 * @param seed the episode's seed, which picks the note's text
 */
export async function solveAddNote(client: WebServClient, id: string, seed: number): Promise<void> {
  const words = ["apples", "bread", "coffee", "dates", "eggs", "flour", "grapes", "honey"];
  const text = (await client.observe(id)).text;
  const typed = await client.step(id, {
    action: "type",
    id: idOf(text, /textbox "?New note/),
    text: `buy ${words[seed % words.length]} ${seed}`,
  });
  assertEquals(typed.status, "ok");
  const after = (await client.observe(id)).text;
  assertEquals(
    (await client.step(id, { action: "click", id: idOf(after, /button "?Add\b/) })).status,
    "ok",
  );
  assertEquals((await client.step(id, { action: "stop", answer: "" })).reward, 1);
}
