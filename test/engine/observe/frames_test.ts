// Many frames are distilled at once: ids stay unique across frames, stable
// across observations, never reused, and each resolves to its element.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { Browser, newContext } from "../../../engine/browser/browser.ts";
import type { Page } from "../../../engine/browser/page.ts";
import { Observer } from "../../../engine/observe/observer.ts";
import { parseElements } from "../../../engine/observe/parse_observation.ts";
import { serveHtml } from "../../_util/html_server.ts";

const CROSS = 12;

function widget(n: number): string {
  return `<!doctype html><body><h3>Widget ${n}</h3><button>Buy ${n}</button>` +
    `<a href="/w/${n}">More ${n}</a><p>[1] Footnote ${n}</p></body>`;
}

Deno.test("Observer.observe() keeps ids unique and stable when many frames are distilled at once", async () => {
  const pages: Record<string, string> = {};
  for (let i = 0; i < CROSS + 3; i++) pages[`/w/${i}`] = widget(i);
  await using server = serveHtml(pages);
  const cross = (i: number) => server.url(`/w/${i}`, "localhost");
  // Same-process frames, one holding a cross-site frame of its own.
  pages[`/nest`] = `<!doctype html><body><h3>Nest</h3><button>Nest button</button>` +
    `<iframe src="${cross(CROSS + 2)}"></iframe></body>`;
  pages["/"] =
    `<!doctype html><title>Frames</title><body><h1>Dashboard</h1><button>Refresh</button>` +
    Array.from({ length: CROSS }, (_, i) => `<div><iframe src="${cross(i)}"></iframe></div>`)
      .join("") +
    `<div><iframe src="/w/${CROSS}"></iframe></div><div><iframe src="/nest"></iframe></div>` +
    `<button>Last</button></body>`;

  await using browser = await Browser.launch();
  await using context = await newContext(browser);
  const observer = Observer.attach(context);
  const page = await context.newPage(server.url("/"));
  const expected = CROSS + 3; // widgets 0..CROSS-1, CROSS (same-process), CROSS+2 (nested)
  let observation = await observer.observe(page);
  for (let i = 0; i < 100; i++) {
    const buys = observation.elements.filter((el) => el.name.startsWith("Buy "));
    if (buys.length === expected - 1) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
    observation = await observer.observe(page);
  }
  const byName = new Map(observation.elements.map((el) => [el.name, el.id]));
  const ids = observation.elements.map((el) => el.id);
  assertEquals(new Set(ids).size, ids.length, "ids are unique across frames");
  for (
    const name of [
      "Refresh",
      "Last",
      "Nest button",
      ...Array.from({ length: CROSS }, (_, i) => `Buy ${i}`),
      `Buy ${CROSS}`,
      `Buy ${CROSS + 2}`,
    ]
  ) {
    assert(byName.has(name), `"${name}" has an id:\n${observation.text}`);
  }
  assert(page.frameSessions.length >= CROSS, "the cross-site frames are out of process");
  // Each element's line carries its id; page text that looks like an id is left alone.
  const shown = parseElements(observation.text);
  for (const el of observation.elements) {
    const line = shown.find((it) => it.id === el.id && it.role === el.role && it.name === el.name);
    assert(line, `[${el.id}] ${el.role} ${el.name} is not on a line of:\n${observation.text}`);
  }
  assertStringIncludes(observation.text, "[1] Footnote 3");
  // Every id resolves to its own element, in its own frame.
  for (
    const name of ["Buy 0", "Buy 7", `Buy ${CROSS}`, `Buy ${CROSS + 2}`, "Nest button", "Last"]
  ) {
    const handle = await observer.resolve(byName.get(name)!);
    assert(handle, `"${name}" resolves`);
    const { result } = await handle.session.send("Runtime.callFunctionOn", {
      objectId: handle.objectId,
      functionDeclaration: "function () { return this.textContent; }",
      returnByValue: true,
    });
    assertEquals(result.value, name);
  }

  // Ids are stable; a new element in a frame gets an id never used before.
  let session;
  for (const candidate of page.frameSessions) {
    const { result } = await candidate.send("Runtime.evaluate", {
      expression: "location.pathname",
      returnByValue: true,
    });
    if (result.value === "/w/5") session = candidate;
  }
  assert(session, "frame 5 has a session");
  await session.send("Runtime.evaluate", {
    expression:
      `document.body.append(Object.assign(document.createElement("button"), { textContent: "Added 5" }))`,
  });
  const again = await observer.observe(page);
  for (const el of again.elements) {
    if (el.name === "Added 5") {
      assert(!ids.includes(el.id), "a new element gets a new id");
      assert(el.isNew);
    } else {
      assertEquals(el.id, byName.get(el.name), `"${el.name}" keeps its id`);
    }
  }
  assert(again.elements.some((el) => el.name === "Added 5"));
  assertEquals(new Set(again.elements.map((el) => el.id)).size, again.elements.length);
});

/** Observes until the page shows `count` ids (frames load after the page), then once more, counting the top session's commands. */
async function observeCounted(observer: Observer, page: Page, count: number) {
  let observation = await observer.observe(page);
  for (let i = 0; i < 100 && observation.elements.length < count; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    observation = await observer.observe(page);
  }
  const calls: string[] = [];
  const send = page.session.send.bind(page.session);
  page.session.send = ((method: string, params?: unknown, options?) => {
    calls.push(method);
    return send(method as never, params as never, options);
  }) as typeof page.session.send;
  try {
    return { observation: await observer.observe(page), calls };
  } finally {
    page.session.send = send;
  }
}

Deno.test("Observer.observe() distils same-process frames in their parent's call", async () => {
  const pages: Record<string, string> = {};
  for (let i = 0; i < 5; i++) pages[`/w/${i}`] = widget(i);
  await using server = serveHtml(pages);
  pages["/"] = `<!doctype html><title>Frames</title><body><button>Top</button>` +
    Array.from({ length: 4 }, (_, i) => `<iframe src="/w/${i}"></iframe>`).join("") +
    `<iframe src="${server.url("/w/4", "localhost")}"></iframe></body>`;
  await using browser = await Browser.launch();
  await using context = await newContext(browser);
  const observer = Observer.attach(context);
  const page = await context.newPage(server.url("/"));
  // The top document's renderer answers one call for itself and its four frames.
  const { observation, calls } = await observeCounted(observer, page, 11);
  assertEquals(calls, ["Runtime.callFunctionOn"]);
  const names = observation.elements.map((el) => el.name);
  for (let i = 0; i < 5; i++) {
    assert(names.includes(`Buy ${i}`), `frame ${i} is observed:\n${observation.text}`);
  }
  const ids = observation.elements.map((el) => el.id);
  assertEquals(new Set(ids).size, ids.length, "ids are unique across frames");
  // An id from a folded frame resolves to its element, in that frame.
  const buy = observation.elements.find((el) => el.name === "Buy 2")!;
  const handle = await observer.resolve(buy.id);
  assert(handle, "the folded frame's id resolves");
  const { result } = await handle.session.send("Runtime.callFunctionOn", {
    objectId: handle.objectId,
    functionDeclaration: "function() { return this.textContent; }",
    returnByValue: true,
  });
  assertEquals(result.value, "Buy 2");
  assert(buy.frame !== observation.elements.find((el) => el.name === "Top")!.frame);
});

Deno.test("Observer.observe() distils a same-process frame the parent cannot reach on its own", async () => {
  await using server = serveHtml({
    "/": `<!doctype html><body><button>Top</button>` +
      `<iframe src="data:text/html,<button>Opaque</button>"></iframe>` +
      `<iframe src="/w"></iframe></body>`,
    "/w": widget(0),
  });
  await using browser = await Browser.launch();
  await using context = await newContext(browser);
  const observer = Observer.attach(context);
  const page = await context.newPage(server.url("/"));
  const { observation, calls } = await observeCounted(observer, page, 4);
  assertEquals(page.frameSessions.length, 0, "both frames live in the page's process");
  // The data: frame has an opaque origin: the parent's call cannot reach it, a call of its own does.
  assertEquals(calls, ["Runtime.callFunctionOn", "Runtime.callFunctionOn"]);
  const names = observation.elements.map((el) => el.name);
  for (const name of ["Top", "Opaque", "Buy 0"]) {
    assert(names.includes(name), `"${name}" is observed:\n${observation.text}`);
  }
});

Deno.test("Observer.observe() distils same-origin sibling frames of another process in one call", async () => {
  const pages: Record<string, string> = {};
  for (let i = 0; i < 10; i++) pages[`/w/${i}`] = widget(i);
  await using server = serveHtml(pages);
  pages["/"] = `<!doctype html><title>Siblings</title><body><button>Top</button>` +
    Array.from(
      { length: 4 },
      (_, i) => `<iframe src="${server.url(`/w/${i}`, "localhost")}"></iframe>`,
    )
      .join("") +
    `</body>`;
  await using browser = await Browser.launch();
  await using context = await newContext(browser);
  const observer = Observer.attach(context);
  const page = await context.newPage(server.url("/"));
  const buys = (o: { elements: { name: string }[] }) =>
    o.elements.filter((el) => el.name.startsWith("Buy ")).map((el) => el.name).sort();
  let observation = await observer.observe(page);
  for (let i = 0; i < 100 && buys(observation).length < 4; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    observation = await observer.observe(page);
  }
  assertEquals(page.frameSessions.length, 4, "the four frames are out of process");
  const counted = async () => {
    const calls: number[] = [];
    const sessions = page.frameSessions;
    const sends = sessions.map((session) => session.send.bind(session));
    sessions.forEach((session, i) => {
      calls[i] = 0;
      session.send = ((method: string, params?: unknown, options?) => {
        if (method === "Runtime.callFunctionOn") calls[i]!++;
        return sends[i]!(method as never, params as never, options);
      }) as typeof session.send;
    });
    try {
      return { observation: await observer.observe(page), calls: calls.reduce((a, b) => a + b) };
    } finally {
      sessions.forEach((session, i) => session.send = sends[i]!);
    }
  };
  // Their origin known, the four are distilled by one call into the first.
  const batched = await counted();
  assertEquals(batched.calls, 1);
  assertEquals(buys(batched.observation), ["Buy 0", "Buy 1", "Buy 2", "Buy 3"]);
  const ids = batched.observation.elements.map((el) => el.id);
  assertEquals(new Set(ids).size, ids.length, "ids are unique across frames");
  for (const name of ["Buy 1", "Buy 3"]) {
    const handle = await observer.resolve(
      batched.observation.elements.find((el) => el.name === name)!.id,
    );
    assert(handle, `"${name}" resolves`);
    const { result } = await handle.session.send("Runtime.callFunctionOn", {
      objectId: handle.objectId,
      functionDeclaration: "function() { return this.textContent; }",
      returnByValue: true,
    });
    assertEquals(result.value, name);
  }

  // A sibling whose document was replaced has not been told its frame id:
  // the first call cannot find it, and it is distilled by a call of its own.
  let moved;
  for (const session of page.frameSessions) {
    const { result } = await session.send("Runtime.evaluate", {
      expression: "location.pathname",
      returnByValue: true,
    });
    if (result.value === "/w/2") moved = session;
  }
  assert(moved, "frame 2 has a session");
  await moved.send("Runtime.evaluate", { expression: `location.href = "/w/9"` });
  let after = await counted();
  for (let i = 0; i < 100 && !buys(after.observation).includes("Buy 9"); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    after = await counted();
  }
  assertEquals(buys(after.observation), ["Buy 0", "Buy 1", "Buy 3", "Buy 9"]);
  assertEquals(after.calls, 2, "the replaced frame took a call of its own");
  assertEquals((await counted()).calls, 1, "then it is found again");
});
