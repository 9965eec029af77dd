/**
 * The soak's well-behaved sessions: a site's scripted solver (the one
 * `site:check` proves the template with) drives a session through the
 * server's public API, as an agent would: JSON observations, actions on
 * their ids. A step our side failed (`env_error`, `timeout`) ends the
 * attempt; the session is reset and solved once more, which is how a
 * trainer recovers.
 *
 * @module
 */
import type { Env, EnvObservation } from "../mod.ts";
import { generateTask, SITES } from "../fixtures/sites/mod.ts";
import { type Ledger, random, type StepBody } from "./_soak_client.ts";

/** One solver episode (a session, up to two attempts). */
export interface SolverEpisode {
  task: string;
  session?: string;
  /** won: reward 1; lost: the episode ended with 0 without a fault; fault: ours failed. */
  outcome: "won" | "lost" | "fault" | "refused" | "error";
  /** Whether a reset after a fault was solved to reward 1. */
  recovered?: boolean;
  reward?: number;
  error?: string;
}

/** A step our side failed: the solver's attempt ends there. */
class InfraFailure extends Error {
  override name = "InfraFailure";
}

/** A step latency of a well-behaved session, with its status. */
export interface Latency {
  ms: number;
  status: string;
}

const ACTOR = "solver";
const OPTIONS = { summarise_after: 0, max_text: 300 };

/** The part of `Env` a solver uses, over a session; notes the last step's body. */
function sessionEnv(
  ledger: Ledger,
  id: string,
  latencies: Latency[],
  last: { body?: StepBody },
): Env {
  return {
    observe: async () => {
      const { status, body } = await ledger.call({
        actor: ACTOR,
        kind: "observe",
        method: "GET",
        path: `/v1/sessions/${encodeURIComponent(id)}/observe?mode=json`,
        session: id,
      });
      if (status !== 200) throw new InfraFailure(`observe answered ${status}`);
      return body as EnvObservation;
    },
    async step(action: unknown) {
      const started = performance.now();
      const body = await ledger.step(ACTOR, id, action);
      if (!body) throw new InfraFailure("the step got no result");
      latencies.push({ ms: performance.now() - started, status: body.status });
      last.body = body;
      if (body.status === "env_error" || body.status === "timeout" || body.status === "expired") {
        throw new InfraFailure(`${body.status}: ${body.info.error?.code}`);
      }
      if (body.status !== "ok") throw new Error(`Step failed: ${JSON.stringify(body.info)}`);
      return { observation: body.observation };
    },
  } as unknown as Env;
}

/** The fixture sites' templates, as `[site, template]` pairs. */
const TEMPLATES = Object.values(SITES).flatMap((site) =>
  site.templates.map((template) => [site, template] as const)
);

/**
 * Runs solver episodes one after another until `until` (epoch ms).
 *
 * @param ledger the run's ledger
 * @param seed this solver's seed
 * @param until when to stop starting episodes
 * @param latencies where step latencies go
 * @param episodes where episodes go
 * @param sites the sites whose templates it solves
 */
export async function solverLoop(
  ledger: Ledger,
  seed: number,
  until: number,
  latencies: Latency[],
  episodes: SolverEpisode[],
  sites: string[],
): Promise<void> {
  const next = random(seed);
  const templates = TEMPLATES.filter(([site]) => sites.includes(site.name));
  if (templates.length === 0) throw new RangeError(`No solvable site among ${sites.join(", ")}`);
  while (Date.now() < until) {
    const [site, template] = templates[Math.floor(next() * templates.length)]!;
    const task = generateTask(site, template.id, Math.floor(next() * 10));
    const episode: SolverEpisode = { task: task.id, outcome: "error" };
    episodes.push(episode);
    let id: string | undefined;
    for (let tries = 0; tries < 30 && id === undefined && Date.now() < until; tries++) {
      const { status, body } = await ledger.call({
        actor: ACTOR,
        kind: "create",
        method: "POST",
        path: "/v1/sessions",
        body: JSON.stringify({ task: task.id, observation: "json", observation_options: OPTIONS }),
      });
      if (status === 200 || status === 201) id = (body as { id: string }).id;
      else if (status === 429 || status === 503 || status === 0) {
        await new Promise((r) => setTimeout(r, 1_000));
      } else break;
    }
    if (id === undefined) {
      episode.outcome = "refused";
      continue;
    }
    episode.session = id;
    ledger.opened(id, ACTOR);
    const last: { body?: StepBody } = {};
    const env = sessionEnv(ledger, id, latencies, last);
    for (let attempt = 0; attempt < 2; attempt++) {
      delete last.body;
      try {
        await template.solve(env, task);
        const end = last.body as StepBody | undefined;
        const reward = end?.done ? end.reward : undefined;
        if (attempt === 0) {
          episode.outcome = reward === 1 ? "won" : "lost";
          if (reward !== undefined) episode.reward = reward;
          if (reward === undefined) episode.error = "the solver ended without ending the episode";
        } else episode.recovered = reward === 1;
        break;
      } catch (error) {
        const message = String(error).slice(0, 300);
        if (attempt === 1) {
          episode.recovered = false;
          episode.error = `${episode.error}; after the reset: ${message}`;
          break;
        }
        if (!(error instanceof InfraFailure)) {
          episode.outcome = "lost";
          episode.error = message;
          break;
        }
        episode.outcome = "fault";
        episode.error = message;
        const reset = await ledger.call({
          actor: ACTOR,
          kind: "reset",
          method: "POST",
          path: `/v1/sessions/${encodeURIComponent(id)}/reset`,
          body: "{}",
          session: id,
        });
        if (reset.status !== 200) {
          episode.recovered = false;
          episode.error += `; the reset answered ${reset.status}`;
          break;
        }
        ledger.opened(id, ACTOR);
      }
    }
    await ledger.call({
      actor: ACTOR,
      kind: "close",
      method: "DELETE",
      path: `/v1/sessions/${encodeURIComponent(id)}`,
    });
  }
}
