// The backend registry: the server finds a backend by name there and nowhere else.
import { assertEquals, assertStringIncludes, assertThrows } from "@std/assert";
import {
  BACKEND_REGISTRY,
  type BackendDefinition,
  BackendRegistry,
} from "../../../adapters/http/backends.ts";
import { BACKENDS } from "../../../adapters/http/server.ts";
import { defaultCatalog } from "../../../adapters/http/catalog.ts";

Deno.test("BackendRegistry.get() refuses an unknown name, listing the registered backends", () => {
  const error = assertThrows(() => BACKEND_REGISTRY.get("kubernetes"), RangeError);
  assertEquals(
    error.message,
    'Unknown backend "kubernetes": the backends are "fixture", "incus", "docker", "shared"',
  );
  assertEquals(BACKENDS, ["fixture", "incus", "docker", "shared"]);
});

Deno.test("BackendRegistry.register() adds a backend in one call, and refuses a second of a name", async () => {
  const opened: string[] = [];
  const lab: BackendDefinition<"lab", { size: number }> = {
    name: "lab",
    summary: "a test backend",
    catalog: () => defaultCatalog([]),
    options: (from) => {
      if ((from.spares ?? 0) > 3) throw new RangeError('Option "spares" must be at most 3');
      return { size: from.spares ?? 1 };
    },
    open(site, options) {
      opened.push(`${site.name}:${options.size}`);
      return Promise.reject(new Error("no sandbox here"));
    },
  };
  const registry = new BackendRegistry().register(lab);
  assertEquals(registry.names, ["lab"]);
  assertStringIncludes(
    assertThrows(() => registry.get("fixture"), RangeError).message,
    'the backends are "lab"',
  );
  // Its options are parsed once, when it is prepared, and handed to every open.
  assertThrows(() => registry.prepare("lab", { spares: 9 }), RangeError, "at most 3");
  const prepared = registry.prepare("lab", { spares: 2 });
  const site = defaultCatalog().sites.get("demo")!;
  await prepared.open(site, {} as never).catch(() => {});
  assertEquals(opened, ["demo:2"]);
  assertThrows(() => registry.register(lab), RangeError, 'Backend "lab" is registered already');
});
