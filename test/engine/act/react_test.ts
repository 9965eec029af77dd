// Typing, checking and selecting reach a real React app's controlled inputs,
// whose state changes only through React's own event system.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { Browser } from "../../../engine/browser/browser.ts";
import { Env } from "../../../engine/env.ts";
import type { EnvObservation } from "../../../engine/env_types.ts";

// React 18's UMD builds, read from the npm packages Deno installed: importing
// them makes import.meta.resolve answer with their files' location.
import "react";
import "react-dom";

const REACT = await Deno.readTextFile(
  new URL("./umd/react.production.min.js", import.meta.resolve("react")),
);
const REACT_DOM = await Deno.readTextFile(
  new URL("./umd/react-dom.production.min.js", import.meta.resolve("react-dom")),
);

const APP = `
const { createElement: h, useState } = React;
function App() {
  const [name, setName] = useState("");
  const [agree, setAgree] = useState(false);
  const [size, setSize] = useState("m");
  return h("form", { onSubmit: (e) => { e.preventDefault(); document.title = "sent " + name; } },
    h("label", null, "Name ", h("input", { value: name, onChange: (e) => setName(e.target.value.toUpperCase()) })),
    h("label", null, h("input", { type: "checkbox", checked: agree, onChange: (e) => setAgree(e.target.checked) }), " Agree"),
    h("label", null, "Size ", h("select", { value: size, onChange: (e) => setSize(e.target.value) },
      h("option", { value: "s" }, "Small"), h("option", { value: "m" }, "Medium"), h("option", { value: "l" }, "Large"))),
    h("output", null, "state: " + JSON.stringify({ name, agree, size })));
}
ReactDOM.createRoot(document.getElementById("root")).render(h(App));
`;

function idOf(observation: EnvObservation, role: string, name: string): number {
  const element = observation.elements.find((el) => el.role === role && el.name.includes(name));
  assert(element, `no ${role} "${name}" in:\n${observation.text}`);
  return element.id;
}

Deno.test("Actor.act() drives React-controlled inputs the way a person's input does", async () => {
  const html = `<title>React</title><div id="root"></div>` +
    `<script>${REACT}</script><script>${REACT_DOM}</script><script>${APP}</script>`;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response(html, { headers: { "content-type": "text/html" } }),
  );
  try {
    await using browser = await Browser.launch();
    await using env = await Env.create(browser, {
      startUrl: `http://127.0.0.1:${server.addr.port}/`,
    });
    let observation = await env.observe();
    const name = idOf(observation, "textbox", "Name");
    observation = (await env.step({ action: "type", id: name, text: "ada" })).observation!;
    assertStringIncludes(observation.text, '"name":"ADA"');
    observation = (await env.step({ action: "type", id: name, text: "grace", mode: "replace" }))
      .observation!;
    assertStringIncludes(observation.text, '"name":"GRACE"');
    const agree = idOf(observation, "checkbox", "Agree");
    observation = (await env.step({ action: "check", id: agree })).observation!;
    assertStringIncludes(observation.text, '"agree":true');
    const size = idOf(observation, "combobox", "Size");
    observation = (await env.step({ action: "select", id: size, option: "Large" })).observation!;
    assertStringIncludes(observation.text, '"size":"l"');
    observation =
      (await env.step({ action: "type", id: name, text: "", enter: true, mode: "append" }))
        .observation!;
    assertEquals(observation.title, "sent GRACE");
  } finally {
    await server.shutdown();
  }
});
