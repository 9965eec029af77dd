// Env.fork() on the fixture backend with real Chromium: the browser state (URL, cookies, local
// and session storage, scroll, typed-but-unsubmitted fields) and the site's database are carried
// to each fork, and neither leaks back to the parent nor across forks.
import { assertEquals, assertNotEquals, assertRejects } from "@std/assert";
import type { DatabaseSync } from "node:sqlite";
import { ActionError, Browser, Env } from "../../mod.ts";
import { FixtureSandbox } from "../../sandboxes/fixture/fixture_sandbox.ts";
import { Gateway } from "../../sandboxes/gateway.ts";
import type { Instance, Site } from "../../sandboxes/types.ts";

/** A page with a server cookie, a tall body, a form and a notes table behind it. */
const site: Site = {
  name: "forkpage",
  seed(db: DatabaseSync) {
    db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)");
  },
  app(db: DatabaseSync) {
    return (request: Request) => {
      const url = new URL(request.url);
      if (url.pathname === "/add") {
        db.prepare("INSERT INTO notes (text) VALUES (?)").run(url.searchParams.get("text") ?? "");
        return new Response("added");
      }
      const html = `<!doctype html><html><head><title>Form</title></head><body>
<form><label>Name <input id="name"></label>
<div><label>Bio <textarea></textarea></label></div>
<label>Size <select id="size"><option>S</option><option>M</option><option>L</option></select></label>
<label><input type="checkbox" id="gift"> Gift</label></form>
<div style="height:4000px">tall</div></body></html>`;
      return new Response(html, {
        headers: { "content-type": "text/html", "set-cookie": "srv=1; Path=/; HttpOnly" },
      });
    };
  },
  state(db: DatabaseSync) {
    return () =>
      Response.json(db.prepare("SELECT text FROM notes ORDER BY id").all().map((r) => r["text"]));
  },
};

async function notes(instance: Instance): Promise<unknown> {
  return await (await instance.state!.fetch("/")).json();
}

/** What the page itself holds: the facts a fork must carry. */
const PAGE_FACTS = `({
  path: location.pathname + location.search,
  cookie: document.cookie,
  local: localStorage.getItem("k"),
  session: sessionStorage.getItem("s"),
  scroll: scrollY,
  name: document.getElementById("name").value,
  bio: document.querySelector("textarea").value,
  size: document.getElementById("size").value,
  gift: document.getElementById("gift").checked,
})`;

Deno.test("Env.fork() carries the browser state and a copy of the site, isolated both ways", async () => {
  await using browser = await Browser.launch();
  await using gateway = new Gateway();
  await using sandbox = new FixtureSandbox(site, { gateway });
  const parentSite = await sandbox.create();
  await using env = await Env.create(browser, { site: parentSite, startUrl: "/form?x=1" });
  // The state a person leaves behind: a write to the site, typed fields, storage, scroll.
  await env.evaluate(`fetch("/add?text=before").then((r) => r.text())`);
  const seen = await env.observe();
  const idOf = (name: string) => seen.elements.find((e) => e.name === name)!.id;
  await env.step({ action: "type", id: idOf("Name"), text: "Ada" });
  await env.step({ action: "type", id: idOf("Bio"), text: "likes forks" });
  await env.step({ action: "select", id: idOf("Size"), option: "L" });
  await env.step({ action: "check", id: idOf("Gift") });
  await env.evaluate(
    `document.cookie = "js=2; path=/"; localStorage.setItem("k", "v"); ` +
      `sessionStorage.setItem("s", "w"); scrollTo(0, 1200); scrollY`,
  );
  const parentFacts = await env.evaluate(PAGE_FACTS);

  const copies: Instance[] = [];
  const forks = await env.fork(2, {
    branch: async () => {
      const copy = await parentSite.fork!();
      copies.push(copy);
      return { site: copy, release: () => copy.destroy() };
    },
  });
  try {
    assertEquals(forks.length, 2);
    for (const [i, fork] of forks.entries()) {
      assertNotEquals(fork.site!.origin, parentSite.origin);
      assertEquals(await fork.evaluate(PAGE_FACTS), parentFacts, `fork ${i}`);
      assertEquals(await notes(copies[i]!), ["before"]);
      // The fork goes on from the parent's step count: four steps taken.
      assertEquals([fork.steps, env.steps], [4, 4]);
    }
    // Writes stay where they were made: site and browser, both ways.
    await forks[0]!.evaluate(
      `localStorage.setItem("k", "fork"); fetch("/add?text=fork").then((r) => r.text())`,
    );
    await env.evaluate(`fetch("/add?text=parent").then((r) => r.text())`);
    assertEquals(await notes(parentSite), ["before", "parent"]);
    assertEquals(await notes(copies[0]!), ["before", "fork"]);
    assertEquals(await notes(copies[1]!), ["before"]);
    assertEquals(await env.evaluate(`localStorage.getItem("k")`), "v");
    assertEquals(await forks[1]!.evaluate(`localStorage.getItem("k")`), "v");
    // A fork's reset is a fresh episode on the seeded site.
    await forks[0]!.reset();
    assertEquals(await notes(copies[0]!), []);
    assertEquals(await forks[0]!.evaluate(`document.cookie.includes("js=2")`), false);
    assertEquals(await notes(parentSite), ["before", "parent"]);
  } finally {
    await Promise.all(forks.map((f) => f.close()));
    await Promise.all(copies.map((c) => c.destroy()));
  }
});

Deno.test("Env.fork() refuses a bad k and a site with no branch, and releases copies on failure", async () => {
  await using browser = await Browser.launch();
  await using gateway = new Gateway();
  await using sandbox = new FixtureSandbox(site, { gateway });
  const parentSite = await sandbox.create();
  await using env = await Env.create(browser, { site: parentSite });
  for (const k of [0, 17, 1.5]) await assertRejects(() => env.fork(k), RangeError, "from 1 to 16");
  await assertRejects(() => env.fork(1), TypeError, "pass branch");
  const released: string[] = [];
  let made = 0;
  await assertRejects(() =>
    env.fork(3, {
      branch: async () => {
        if (++made === 3) throw new Error("no space left");
        const copy = await parentSite.fork!();
        return {
          site: copy,
          release: async () => {
            released.push(copy.id);
            await copy.destroy();
          },
        };
      },
    })
  );
  assertEquals(released.length, 2, "both copies made before the failure are released");
  // The parent goes on.
  assertEquals((await env.observe()).url.startsWith(parentSite.origin), true);
});

Deno.test("Env.fork() refuses while a dialog is open, and forks once it is answered", async () => {
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, {
    startUrl: "data:text/html,<button onclick=\"confirm('Sure?')\">Ask</button>",
  });
  const ask = (await env.observe()).elements.find((e) => e.name === "Ask")!;
  await env.step({ action: "click", id: ask.id });
  const refused = await assertRejects(() => env.fork(1), ActionError);
  assertEquals(refused.code, "not-allowed");
  await env.step({ action: "dialog", accept: true });
  const [fork] = await env.fork(1);
  assertEquals([fork!.steps, env.steps], [2, 2]);
  await fork!.close();
});

Deno.test("Env.fork() puts back a field the page renders late, and one its script clears after load", async () => {
  await using browser = await Browser.launch();
  // After the load, as a client-side framework would: one field cleared, another rendered.
  const page = `<input id="early" aria-label="Early"><script>
addEventListener("load", () => setTimeout(() => {
  document.getElementById("early").value = "";
  document.body.insertAdjacentHTML("beforeend", '<input id="late" aria-label="Late">');
}, 40));
</script>`;
  await using env = await Env.create(browser, {
    startUrl: `data:text/html,${encodeURIComponent(page)}`,
  });
  const seen = await env.observe();
  const idOf = (name: string) => seen.elements.find((e) => e.name === name)!.id;
  await env.step({ action: "type", id: idOf("Early"), text: "first" });
  await env.step({ action: "type", id: idOf("Late"), text: "second" });
  const values = `[document.getElementById("early").value, document.getElementById("late")?.value]`;
  assertEquals(await env.evaluate(values), ["first", "second"]);
  const [fork] = await env.fork(1);
  try {
    assertEquals(await fork!.evaluate(values), ["first", "second"]);
  } finally {
    await fork!.close();
  }
});
