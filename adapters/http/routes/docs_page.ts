/**
 * The `/docs` page: the OpenAPI document rendered as one self-contained
 * HTML page (no scripts, no CDN), one section per operation with its
 * parameters, request body and responses.
 *
 * @module
 */

type Json = Record<string, unknown>;

/**
 * Renders an OpenAPI 3.1 document as HTML.
 *
 * @param document the OpenAPI document
 * @returns the HTML page
 */
export function docsPage(document: unknown): string {
  const doc = document as Json;
  const info = (doc.info ?? {}) as Json;
  const paths = (doc.paths ?? {}) as Record<string, Record<string, Json>>;
  const schemas = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>;
  const sections: string[] = [];
  const index: string[] = [];
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const anchor = `${method}-${path}`.replace(/[^a-z0-9]+/gi, "-");
      index.push(
        `<li><a href="#${anchor}"><code>${method.toUpperCase()} ${escape(path)}</code></a> ${
          escape(String(operation.summary ?? ""))
        }</li>`,
      );
      const parameters = (operation.parameters ?? []) as Json[];
      const body = ((operation.requestBody as Json | undefined)?.content as Json | undefined)?.[
        "application/json"
      ] as Json | undefined;
      const responses = Object.entries((operation.responses ?? {}) as Record<string, Json>);
      sections.push(`<section id="${anchor}">
<h2><code>${method.toUpperCase()} ${escape(path)}</code></h2>
<p>${escape(String(operation.summary ?? ""))}</p>
${operation.description ? `<p>${escape(String(operation.description))}</p>` : ""}
${
        parameters.length
          ? `<h3>Parameters</h3><ul>${
            parameters.map((p) =>
              `<li><code>${escape(String(p.name))}</code> (${escape(String(p.in))})</li>`
            ).join("")
          }</ul>`
          : ""
      }
${body ? `<h3>Request body</h3><pre>${escape(JSON.stringify(body.schema, null, 2))}</pre>` : ""}
<h3>Responses</h3><ul>${
        responses.map(([status, response]) =>
          `<li><code>${status}</code> ${escape(String(response.description ?? ""))}${
            schemaName(response)
          }</li>`
        ).join("")
      }</ul>
</section>`);
    }
  }
  const components = Object.entries(schemas).map(([name, schema]) =>
    `<section id="schema-${escape(name)}"><h3>${escape(name)}</h3><pre>${
      escape(JSON.stringify(schema, null, 2))
    }</pre></section>`
  );
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${escape(String(info.title ?? "API"))} — docs</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }
pre { background: #f4f4f4; padding: .6rem; overflow-x: auto; font-size: 13px; }
section { border-top: 1px solid #ddd; margin-top: 1.2rem; }
</style></head><body>
<h1>${escape(String(info.title ?? "API"))}</h1>
<p>The machine-readable document is <a href="/openapi.json">/openapi.json</a>.</p>
<ul>${index.join("")}</ul>
${sections.join("\n")}
<h2>Schemas</h2>
${components.join("\n")}
</body></html>`;
}

function schemaName(response: Json): string {
  const content = response.content as Record<string, Json> | undefined;
  const schema = content?.["application/json"]?.schema as Json | undefined;
  const ref = typeof schema?.$ref === "string" ? schema.$ref.split("/").pop() : undefined;
  return ref ? ` — <a href="#schema-${escape(ref)}">${escape(ref)}</a>` : "";
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
