/**
 * The part of `Env` the site kit's solvers use (`observe()` and `step()`),
 * over a rollout server's session API, so a template's solver drives a
 * session through HTTP as it drives an `Env` in process.
 *
 * @module
 */
import type { Env, EnvObservation } from "../../mod.ts";
import type { WebServClient } from "../../adapters/client/mod.ts";

/**
 * A session seen as an `Env` by a solver.
 *
 * @param client the server's client
 * @param id the session
 * @returns an object with the `Env` methods solvers call; a step that is not
 *   `ok` throws with the server's answer
 */
export function sessionAsEnv(client: WebServClient, id: string): Env {
  return {
    observe: async () => await client.observe(id, "json") as unknown as EnvObservation,
    async step(action: unknown) {
      const step = await client.step(id, action as Parameters<WebServClient["step"]>[1]);
      if (step.status !== "ok") throw new Error(`Step failed: ${JSON.stringify(step.info)}`);
      return { observation: step.observation };
    },
  } as unknown as Env;
}
