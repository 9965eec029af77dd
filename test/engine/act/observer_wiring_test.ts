import { assert, assertEquals, assertRejects } from "@std/assert";
import { Actor } from "../../../engine/act/actor.ts";
import { ActionError } from "../../../engine/act/errors.ts";
import { Browser, newContext } from "../../../engine/browser/browser.ts";
import { Observer } from "../../../engine/observe/observer.ts";
import { Settler } from "../../../engine/settle/settler.ts";
import { serveSpa } from "../../../fixtures/spa/mod.ts";
import { ACT_FULL, ACT_STUB } from "../../../engine/observe/_page_bundle.ts";

/** The controls page in a context of its own, the observer as the actor's resolver. */
async function openControls(origin: string, browser: Browser) {
  const context = await newContext(browser);
  const settler = Settler.install(context);
  const observer = Observer.attach(context);
  const page = await context.newPage(`${origin}/act/controls`);
  const actor = new Actor(context, { resolver: observer, settler });
  return { context, observer, page, actor };
}

Deno.test("Actor.act() acts on observation ids when the observer is the resolver", async () => {
  await using server = serveSpa();
  await using browser = await Browser.launch();
  const { context, observer, page, actor } = await openControls(server.origin, browser);
  await using _ = context;
  const { elements } = await observer.observe(page);
  const find = (role: string, name: string) => {
    const element = elements.find((e) => e.role === role && e.name === name);
    assert(element, `no ${role} "${name}" in the observation`);
    return element.id;
  };
  // Chromium answers a call whose source passes ~850 characters about 43 ms
  // late: in the observer's world the actor calls its library by name.
  const sources: string[] = [];
  const send = page.session.send.bind(page.session);
  page.session.send = ((method: string, params?: { functionDeclaration?: string }, options?) => {
    if (method === "Runtime.callFunctionOn") sources.push(params?.functionDeclaration ?? "");
    return send(method as never, params as never, options);
  }) as typeof page.session.send;
  await actor.act({ action: "click", id: find("button", "Click me") });
  await actor.act({ action: "type", id: find("textbox", "Name"), text: "Ada" });
  await actor.act({ action: "select", id: find("combobox", "Pick a fruit"), option: "Cherry" });
  page.session.send = send;
  // The actor's calls (settling sends its own barriers).
  const acted = sources.filter((source) => source === ACT_STUB || source === ACT_FULL);
  assert(acted.length > 5, `the actor made in-page calls: ${acted.length}`);
  assertEquals(acted.filter((source) => source !== ACT_STUB).length, 0, "every call is the stub");
  assert(ACT_STUB.length < 800, `the stub is short: ${ACT_STUB.length}`);
  const { result } = await page.session.send("Runtime.evaluate", {
    expression: "[window.__log.map((entry) => Object.keys(entry)[0]), window.__name]",
    returnByValue: true,
  });
  assertEquals(result.value, [["click", "fruit"], "Ada"]);
  const disguise = await page.session.send("Runtime.evaluate", {
    expression: `[setTimeout, addEventListener, Function.prototype.toString].map(String).join()`,
    returnByValue: true,
  });
  const seen = await page.session.send("Runtime.evaluate", {
    expression: `typeof globalThis.__webservAct`,
    returnByValue: true,
  });
  assertEquals(seen.result.value, "undefined", "the library is not in the page's world");
  assertEquals(
    disguise.result.value,
    "function setTimeout() { [native code] },function addEventListener() { [native code] }," +
      "function toString() { [native code] }",
    "both main-world hooks stay disguised together",
  );
  const remove = find("button", "Remove me");
  await page.session.send("Runtime.evaluate", {
    expression: `document.querySelector("#remove").remove()`,
  });
  const error = await assertRejects(() => actor.act({ action: "click", id: remove }), ActionError);
  assertEquals(error.code, "stale-id");
  // An id of the document before a reload, observed again or not: its element is gone.
  const button = find("button", "Click me");
  await actor.act({ action: "reload" });
  const afterReload = await assertRejects(
    () => actor.act({ action: "hover", id: button }),
    ActionError,
  );
  assertEquals(afterReload.code, "stale-id");
  await observer.observe(page);
  const observedAgain = await assertRejects(
    () => actor.act({ action: "click", id: button }),
    ActionError,
  );
  assertEquals(observedAgain.code, "stale-id");
});

Deno.test("Actor.act() aims a mouse action in the top frame without looking up a frame offset", async () => {
  await using server = serveSpa();
  await using browser = await Browser.launch();
  const { context, observer, page, actor } = await openControls(server.origin, browser);
  await using _ = context;
  const { elements } = await observer.observe(page);
  const id = elements.find((e) => e.role === "button" && e.name === "Click me")?.id;
  assert(id !== undefined, "no Click me button in the observation");
  const methods: string[] = [];
  const send = page.session.send.bind(page.session);
  page.session.send = ((method: string, params?: { functionDeclaration?: string }, options?) => {
    // The actor's in-page calls, not settling's barriers.
    const settling = method === "Runtime.callFunctionOn" &&
      params?.functionDeclaration !== ACT_STUB && params?.functionDeclaration !== ACT_FULL;
    if (!settling) methods.push(method);
    return send(method as never, params as never, options);
  }) as typeof page.session.send;
  await actor.act({ action: "hover", id });
  await actor.act({ action: "click", id });
  // Zoomed in, the top frame's coordinates are no longer the page's: the
  // offset is looked up again, and the click still lands.
  await send("Emulation.setPageScaleFactor", { pageScaleFactor: 2 });
  const zoomed = methods.length;
  await actor.act({ action: "click", id });
  page.session.send = send;
  const count = (list: string[], method: string) => list.filter((m) => m === method).length;
  const plain = methods.slice(0, zoomed);
  assertEquals(count(plain, "DOM.getContentQuads"), 0, `no offset lookup: ${plain.join(", ")}`);
  // The element is found by id in the observer's world: a hover asks its facts and point in one
  // call, then (the page has an out-of-process frame) whether the move reached the target; a
  // click asks facts and point, then one re-aim check that also says the move reached it and
  // arms the record of the press, reads between press and release whether the press reached
  // the target, then reads what the target received of the press.
  assertEquals(count(plain, "Runtime.callFunctionOn"), 6, plain.join(", "));
  assert(
    count(methods.slice(zoomed), "DOM.getContentQuads") > 0,
    "zoomed: the offset is looked up",
  );
  const { result } = await send("Runtime.evaluate", {
    expression: "window.__log.map((entry) => Object.keys(entry)[0])",
    returnByValue: true,
  });
  assertEquals(result.value, ["click", "click"]);
});

Deno.test("Actor.act() names a cover in normal flow that the observation does not look for", async () => {
  await using browser = await Browser.launch();
  await using context = await newContext(browser);
  const observer = Observer.attach(context);
  const actor = new Actor(context, { resolver: observer });
  // Only positioned boxes are hit-tested as covers; this one is moved over by a transform.
  const page = await context.newPage(
    "data:text/html," + encodeURIComponent(
      `<button style="display:block;width:200px;height:40px">Under</button>
      <div id="sheet" style="transform:translateY(-40px);width:300px;height:60px;background:#eee">Sheet</div>`,
    ),
  );
  const { elements } = await observer.observe(page);
  const under = elements.find((el) => el.name === "Under");
  assert(under, "the button keeps its id: a normal-flow cover is not looked for");
  const error = await assertRejects(
    () => actor.act({ action: "click", id: under.id }),
    ActionError,
  );
  assertEquals(error.code, "covered");
  assertEquals(error.cover, 'div#sheet "Sheet"');
});
