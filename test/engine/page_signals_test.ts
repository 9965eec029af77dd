// Env.verify() hands the verifier what the final page says it is: its body class, MediaWiki's
// page configuration, and the HTTP status the document was served with.
import { assertEquals } from "@std/assert";
import { Browser } from "../../engine/browser/browser.ts";
import { Env } from "../../engine/env.ts";
import type { EnvTask, EpisodeOutcome } from "../../engine/task.ts";

Deno.test("Env.verify() passes the final page's body class, configuration and status", async () => {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/wiki") {
      return new Response(
        `<html><head><script>RLCONF={"wgPageName":"Harbor","wgArticleId":12,"wgAction":"view","wgCategories":["A"]};</script></head><body class="mediawiki ns-0">Harbor</body></html>`,
        { headers: { "content-type": "text/html" } },
      );
    }
    if (path === "/missing") {
      return new Response(`<body class="error404">Not found</body>`, {
        status: 404,
        headers: { "content-type": "text/html" },
      });
    }
    return new Response(`<body class="home blog">Home</body>`, {
      headers: { "content-type": "text/html" },
    });
  });
  await using _server = { [Symbol.asyncDispose]: () => server.shutdown() };
  const outcomes: EpisodeOutcome[] = [];
  const task: EnvTask = {
    id: "t/1",
    instruction: "Open a page",
    startUrl: "/",
    begin: () => Promise.resolve(),
    verify: (outcome) => {
      outcomes.push(outcome);
      return Promise.resolve({ reward: 0, reason: "recorded" });
    },
  };
  const site = { origin: `http://127.0.0.1:${server.addr.port}`, reset: () => Promise.resolve() };
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { site, task });
  await env.verify();
  await env.step({ action: "goto", url: "/wiki" });
  await env.verify();
  await env.step({ action: "goto", url: "/missing" });
  await env.verify();
  assertEquals(outcomes.map((outcome) => outcome.page), [
    { bodyClass: "home blog", status: 200 },
    {
      bodyClass: "mediawiki ns-0",
      config: { wgPageName: "Harbor", wgArticleId: 12, wgAction: "view" },
      status: 200,
    },
    { bodyClass: "error404", status: 404 },
  ]);
});
