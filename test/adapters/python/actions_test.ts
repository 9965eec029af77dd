// The Python client's action types come from the one declaration of the
// action space: the committed module is what the generator writes now, and
// Python reads it.
import { assertEquals } from "@std/assert";
import { PYTHON_ACTIONS_PATH, pythonActions } from "../../../tools/python_actions.ts";
import { ACTION_NAMES } from "../../../engine/act/action.ts";

Deno.test("webserv/actions.py is generated from the action declaration and current", async () => {
  assertEquals(
    await Deno.readTextFile(PYTHON_ACTIONS_PATH),
    pythonActions(),
    "stale: run deno run --allow-write tools/python_actions.ts",
  );
  const { stdout, success } = await new Deno.Command("python3", {
    args: ["-c", "import json, webserv.actions as w; print(json.dumps(list(w.ACTION_NAMES)))"],
    cwd: new URL("..", PYTHON_ACTIONS_PATH),
    stdout: "piped",
  }).output();
  assertEquals(success, true);
  assertEquals(JSON.parse(new TextDecoder().decode(stdout)), [...ACTION_NAMES]);
});
