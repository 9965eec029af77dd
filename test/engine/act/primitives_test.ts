// The primitives under many design systems, from npm: React Aria's slider,
// whose real `<input type="range">` hides in a visually hidden box inside
// the thumb a person drags, and Radix's checkbox, a `<button
// role="checkbox">` named by the `<label>` around it.
import { assert, assertEquals } from "@std/assert";
import { Browser } from "../../../engine/browser/browser.ts";
import { serveApps } from "../../../fixtures/apps/mod.ts";
import { ARIA_VOLUME_START } from "../../../fixtures/apps/pages_react_aria.ts";
import { openAppPage, pageValue } from "./_app_pages.ts";

Deno.test("Env.step() drags React Aria's slider by its thumb and moves it with keys; Radix's checkbox is named by its label", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/react-aria");
  const observation = await env.observe();
  const slider = observation.elements.find((el) => el.role === "slider");
  assert(slider, `no slider:\n${observation.text}`);
  assertEquals([slider.name, slider.value], ["Volume", String(ARIA_VOLUME_START)]);
  // Boxed by the thumb (18 px), not the hidden input's own box nor the track.
  assertEquals([slider.box[2], slider.box[3]], [18, 18]);
  // 2 px a step on the 200 px track, from the thumb.
  let step = await env.step({ action: "drag", id: slider.id, dx: 40, dy: 0 });
  assertEquals(step.result.detail, "dragged");
  assertEquals(
    step.observation.elements.find((el) => el.id === slider.id)?.value,
    String(ARIA_VOLUME_START + 20),
  );
  step = await env.step({ action: "press", id: slider.id, keys: "ArrowRight" });
  const mono = step.observation.elements.find((el) => el.role === "checkbox");
  assertEquals(mono?.name, "Mono output", step.observation.text);
  await env.step({ action: "check", id: mono!.id });
  assertEquals(
    await pageValue(env, "JSON.stringify(window.__sound)"),
    JSON.stringify({ volume: ARIA_VOLUME_START + 21, mono: true }),
  );
});
