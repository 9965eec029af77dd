// The Node smoke suite: the engine bundled from mod.ts (see tools/test_node.ts),
// run by Node's own test runner against a real Chromium and a fixture page
// served by node:http. Run it with `deno task test:node`.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import process from "node:process";
import { test } from "node:test";

const bundle = process.env.WEBSERV_BUNDLE;
if (!bundle) throw new Error("Set WEBSERV_BUNDLE to the bundled mod.ts (deno task test:node does)");
const { Browser, Env, ActionError, parseToolCall, browserInternals } = await import(bundle);

const PAGE = `<!doctype html><title>Counter</title>
<h1>Counter</h1>
<p id="count">Count: 0</p>
<button onclick="document.getElementById('count').textContent = 'Count: ' + (++window.n)">Add</button>
<label>Note <input id="note"></label>
<script>window.n = 0;</script>`;

async function serve() {
  const server = createServer((_request, response) => {
    response.setHeader("content-type", "text/html; charset=utf-8");
    response.end(PAGE);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  return { server, origin: `http://127.0.0.1:${port}` };
}

test("Env launches, observes, steps and resets on a fixture page under Node", async () => {
  const { server, origin } = await serve();
  let resets = 0;
  const site = {
    origin,
    reset() {
      resets++;
      return Promise.resolve();
    },
  };
  const browser = await Browser.launch();
  const profile = browserInternals(browser).process.userDataDir;
  try {
    // From root, Chromium runs as another user (its sandbox on where the machine allows).
    if (process.getuid?.() === 0) {
      assert.notEqual(browserInternals(browser).process.sandbox.user, "current");
    }
    const env = await Env.create(browser, { site, startUrl: "/" });
    const first = await env.observe();
    assert.match(first.text, /\[\d+\] button "?Add"?$/m);
    assert.match(first.text, /Count: 0/);
    const add = first.elements.find((element) => element.name === "Add");
    assert.ok(add, first.text);

    const click = await env.step({ action: "click", id: add.id });
    assert.equal(click.result.settle?.settled, true);
    assert.match(click.observation.text, /Count: 1/);

    const note = click.observation.elements.find((element) => element.role === "textbox");
    const typed = await env.step(
      parseToolCall("type", { id: note.id, text: "hi", mode: null, enter: null }),
    );
    assert.match(typed.observation.text, /value="hi"/);

    await assert.rejects(() => env.step({ action: "click", id: 9999 }), ActionError);

    await env.reset();
    assert.equal(resets, 1);
    const fresh = await env.observe();
    assert.match(fresh.text, /Count: 0/);
    await env.close();
  } finally {
    await browser.close();
    server.close();
  }
  assert.equal(existsSync(profile), false, `the profile "${profile}" was left behind`);
});
