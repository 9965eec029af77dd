// Observation options through the server: a session's observation_options (on create, on reset,
// in the WebSocket's and OpenEnv's reset) change how the page is distilled; bad values are a
// typed 400 (422 in OpenEnv's pydantic shape), and the OpenAPI schema declares them.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { WebServClient, WebServError } from "../../../adapters/client/mod.ts";
import { startServer } from "../../../adapters/http/server.ts";

// A page with a run of 40 footer links below the fold (summarised by default) and a
// 150-character button.
const LONG = `Subscribe to ${"the weekly digest ".repeat(8)}`.trim();
const PAGE = `<title>Options</title><main><h1>Options</h1><button>${LONG}</button>
<div style="height:3000px"></div></main><footer><ul>${
  Array.from({ length: 40 }, (_, i) => `<li><a href="/t${i + 1}">Tag ${i + 1}</a></li>`).join("")
}</ul></footer>`;

function buttonName(observation: { elements?: Record<string, unknown>[] | undefined }): string {
  const button = observation.elements?.find((el) => el["role"] === "button");
  return String(button?.["name"]);
}

function serve(): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response(PAGE, { headers: { "content-type": "text/html" } }),
  );
}

Deno.test("observation_options on create and reset change the observation; bad values are a typed 400", async () => {
  await using site = serve();
  await using server = await startServer({ port: 0 });
  const client = new WebServClient(server.url);
  const url = `http://127.0.0.1:${site.addr.port}/`;

  const plain = await client.createSession({ url, observation: "json" });
  assertStringIncludes(plain.observation.text, "summariseAfter 0", "40 links are summarised");
  assertEquals(plain.observation.text.includes("Tag 40 →"), false);
  assertEquals(buttonName(plain.observation).length, 100, "a name is clipped at 100");

  const full = await client.createSession({
    url,
    observation: "json",
    observation_options: { summarise_after: 0, max_text: 300 },
  });
  assertStringIncludes(full.observation.text, "Tag 40 →");
  assertEquals(buttonName(full.observation), LONG);
  assertEquals(full.observation.text.includes("summariseAfter 0"), false);
  // The options hold for the steps of the episode, not only its first observation.
  const step = await client.step(full.id, { action: "reload" });
  assertStringIncludes(step.observation?.text ?? "", "Tag 40 →");

  // A reset changes them for the next episode.
  const reset = await client.reset(full.id, { observation_options: { max_text: 20 } });
  assertEquals(buttonName(reset.observation), "Subscribe to the we…");
  assertStringIncludes(reset.observation.text, "summariseAfter 0", "back to the default run");

  for (
    const bad of [{ max_text: 0 }, { summarise_after: -1 }, { keep_items: 1.5 }, { colour: 1 }]
  ) {
    const refused = await fetch(`${server.url}/v1/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url, observation_options: bad }),
    });
    assertEquals(refused.status, 400, JSON.stringify(bad));
    const error = await refused.json();
    assert(typeof error.code === "string" && error.code.length > 0, JSON.stringify(error));
    assertStringIncludes(error.message, "observation_options", JSON.stringify(error));
  }
  const badReset = await client.reset(plain.id, { observation_options: { max_text: 5 } })
    .then(() => undefined, (error) => error);
  assert(badReset instanceof WebServError && badReset.status === 400, String(badReset));

  const schema = await (await fetch(`${server.url}/openapi.json`)).json();
  const options = schema.components.schemas.ObservationOptions;
  assertEquals(Object.keys(options.properties).sort(), [
    "keep_items",
    "max_text",
    "summarise_after",
  ]);
  await client.close(plain.id);
  await client.close(full.id);
});

Deno.test("observation_options in the WebSocket's and OpenEnv's reset change the observation", async () => {
  await using site = serve();
  await using server = await startServer({ port: 0 });
  const url = `http://127.0.0.1:${site.addr.port}/`;
  const socket = new WebSocket(`${server.url.replace("http", "ws")}/ws`);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  const replies: { type: string; data: Record<string, unknown> }[] = [];
  const next = () =>
    new Promise<{ type: string; data: Record<string, unknown> }>((resolve) => {
      socket.onmessage = (event) => resolve(JSON.parse(event.data));
    });
  const textOf = (reply: { data: Record<string, unknown> }) =>
    (reply.data.observation as { text: string }).text;
  let reply = next();
  socket.send(JSON.stringify({ type: "reset", data: { url } }));
  replies.push(await reply);
  assertStringIncludes(textOf(replies[0]!), "summariseAfter 0");
  reply = next();
  socket.send(
    JSON.stringify({ type: "reset", data: { observation_options: { summarise_after: 0 } } }),
  );
  replies.push(await reply);
  assertEquals(replies[1]!.type, "observation");
  assertStringIncludes(textOf(replies[1]!), "Tag 40 →");
  reply = next();
  socket.send(JSON.stringify({ type: "reset", data: { observation_options: { max_text: 1 } } }));
  replies.push(await reply);
  assertEquals(replies[2]!.type, "error");
  socket.close();

  const openenv = await fetch(`${server.url}/reset`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url, observation_options: { summarise_after: 0 } }),
  });
  assertEquals(openenv.status, 200);
  assertStringIncludes((await openenv.json()).observation.text, "Tag 40 →");
  const refused = await fetch(`${server.url}/reset`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url, observation_options: { max_text: 1 } }),
  });
  assertEquals(refused.status, 422);
  const detail = (await refused.json()).detail;
  assertEquals(detail[0].loc, ["body", "observation_options", "max_text"]);
});
