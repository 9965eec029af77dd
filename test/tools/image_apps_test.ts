// `deno task image:apps`: a build tool that is missing is named, with what installs it.
import { assertRejects } from "@std/assert";
import { run } from "../../tools/image_apps.ts";

Deno.test("run() names a build tool that is not installed and what installs it, not a bare spawn error", async () => {
  await assertRejects(
    () => run("webserv-no-such-tool", ["--version"], "make the root filesystem"),
    Error,
    "Cannot make the root filesystem: webserv-no-such-tool is not installed (apt-get install webserv-no-such-tool)",
  );
  await assertRejects(() => run("false", [], "fail"), Error, "Cannot fail: false exited with 1");
});
