// `deno task tasks`: the task list on the command line.
import { assertEquals, assertStringIncludes, assertThrows } from "@std/assert";
import { main } from "../../tools/tasks.ts";

Deno.test("main() lists count tasks of one site from a seed", () => {
  const tasks: { id: string; seed: number; site: string }[] = JSON.parse(
    main(["--site", "shop", "--seed", "7", "--count", "3", "--json"]),
  );
  assertEquals(tasks.length, 3);
  for (const task of tasks) {
    assertEquals([task.site, task.seed], ["shop", 7]);
  }
  const text = main(["--site", "shop", "--seed", "7", "--count", "1"]);
  assertStringIncludes(text, `${tasks[0]?.id}  (`);
  assertStringIncludes(text, "start: /");
});

Deno.test("main() lists a real application's tasks when --site names it (WordPress)", () => {
  const tasks: { id: string; seed: number; site: string; startUrl: string }[] = JSON.parse(
    main(["--site", "wordpress", "--seed", "3", "--count", "2", "--json"]),
  );
  assertEquals(tasks.map((task) => [task.site, task.seed]), [["wordpress", 3], ["wordpress", 3]]);
  assertEquals(tasks[0]?.startUrl, "/wp-login.php");
});

Deno.test("main() rejects bad arguments with a TypeError", () => {
  assertThrows(() => main(["--count", "0"]), TypeError, 'Invalid --count "0"');
  assertThrows(() => main(["--split", "dev"]), TypeError, 'Invalid --split "dev"');
  assertThrows(() => main(["--site", "nope"]), TypeError, 'No site "nope"');
});
