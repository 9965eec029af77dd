/**
 * The reference flow (`webserv.harness.rollout`) on a real application:
 * WordPress's `post-author` on the rollout server's shared backend, played by
 * the scripted model (`webserv.scripted_model`), as `deno task bench:rollouts`
 * drives it. The solving script earns 1 in 7 steps and a wrong answer 0, so
 * the bench's real-application rows measure rollouts that are really solved.
 * Fails, never skips, when the image is missing: build it with
 * `deno task image:apps wordpress`.
 */
import { startServer } from "../../adapters/http/server.ts";
import { pytest } from "../adapters/python/_venv.ts";
import { SHARED_PREFIX } from "./_shared.ts";
import { requireIncusImage } from "./_apps.ts";
import { POOL, WORDPRESS } from "./_wordpress.ts";

Deno.test("the scripted model solves wordpress/post-author through the harness on the shared backend", async () => {
  await requireIncusImage(WORDPRESS);
  await using server = await startServer({
    port: 0,
    backend: "shared",
    incusPool: POOL,
    incusPrefix: SHARED_PREFIX,
    maxSessions: 2,
    stepTimeoutMs: 60_000,
  });
  await pytest(["test_harness_wordpress.py"], { WEBSERV_URL: server.url }, ["-v"]);
});
