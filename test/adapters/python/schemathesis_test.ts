// Schemathesis (pinned in adapters/python/requirements-test.txt) against
// /openapi.json: a bounded run with live sessions seeded for the {id}
// parameters, the standard checks plus response-schema conformance, and no
// failure allowed.
import { assertEquals, assertStringIncludes } from "@std/assert";
import { startServer } from "../../../adapters/http/server.ts";
import { WebServClient } from "../../../adapters/client/mod.ts";
import { VENV, venvPython } from "./_venv.ts";

const CHECKS = [
  "not_a_server_error",
  "status_code_conformance",
  "content_type_conformance",
  "response_headers_conformance",
  "response_schema_conformance",
].join(",");

Deno.test("schemathesis finds no failure in /openapi.json's operations", async () => {
  venvPython();
  await using server = await startServer({ port: 0, maxSessions: 8 });
  const client = new WebServClient(server.url);
  const ids: string[] = [];
  for (const task of ["demo/add-note/1", "demo/add-note/2", "demo/add-note/3"]) {
    ids.push((await client.createSession({ task })).id);
  }
  const dir = await Deno.makeTempDir({ prefix: "webserv-schemathesis-" });
  try {
    const config = `${dir}/schemathesis.toml`;
    await Deno.writeTextFile(
      config,
      `[dictionaries.sessions]\nvalues = ${JSON.stringify(ids)}\n\n` +
        `[parameters]\n"path.id" = { dictionary = "sessions", probability = 0.9 }\n`,
    );
    const output = await new Deno.Command(`${VENV}/bin/schemathesis`, {
      args: [
        "--config-file",
        config,
        "--no-color",
        "run",
        `${server.url}/openapi.json`,
        "--checks",
        CHECKS,
        "--max-examples",
        "10",
        "--workers",
        "1",
        "--seed",
        "1",
        "--request-timeout",
        "60",
      ],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
    assertEquals(output.code, 0, text);
    assertStringIncludes(text, "SUMMARY");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
