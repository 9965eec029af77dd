/**
 * Task proposals through the server (issue 21): `POST /v1/tasks/proposals`
 * validates a declarative task spec on its seed's data
 * (`fixtures/sites/kit/proposals.ts`: the read runs through the site's state
 * API, the truth is unique and non-empty, the op is in the closed set, the
 * instruction does not hold the truth, the blind controls earn 0) and answers
 * 201 with the task it became, unproven; a refused proposal gets 422 with the
 * reason. `GET /v1/tasks/proposals` lists the accepted ones. Truths are never
 * sent back.
 *
 * @module
 */
import type { Context, Hono } from "hono";
import {
  type AcceptedProposal,
  acceptProposedTask,
  isSeed,
  KitWorkers,
  listProposals,
  OffloadError,
  ProposalError,
  proposeTask,
} from "../../fixtures/sites/mod.ts";
import type { SiteModule } from "../../fixtures/sites/mod.ts";
import { badSeed, type Catalog } from "./catalog.ts";
import { HttpError } from "./http_error.ts";

/** An accepted proposal as the server shows it: the task without its truth. */
export interface ProposalBody {
  /** The task's id, `site/proposal-<hash>/seed`. */
  id: string;
  /** The site. */
  site: string;
  /** The template, `proposal-<hash>`. */
  template: string;
  /** The seed of its data. */
  seed: number;
  /** What the agent is asked. */
  instruction: string;
  /** Where an episode starts. */
  start_url: string;
  /** The answer op. */
  op: string;
  /** Always `false`: no solver has won it. */
  proven: false;
}

function body(accepted: AcceptedProposal): ProposalBody {
  const { task } = accepted;
  return {
    id: task.id,
    site: task.site,
    template: task.template,
    seed: task.seed,
    instruction: task.instruction,
    start_url: task.startUrl,
    op: task.evaluator.kind === "answer" ? task.evaluator.op : task.evaluator.kind,
    proven: false,
  };
}

/**
 * Weighs a proposal on its seed's data in a worker when the site is a shipped
 * one (seeding a new seed takes seconds of CPU), in this thread otherwise,
 * and accepts it here, where sessions look accepted proposals up.
 */
async function propose(
  sites: Record<string, SiteModule>,
  spec: unknown,
  workers: KitWorkers | undefined,
): Promise<AcceptedProposal> {
  const name = typeof spec === "object" && spec !== null ? Reflect.get(spec, "site") : undefined;
  const site = typeof name === "string" && Object.hasOwn(sites, name) ? sites[name] : undefined;
  if (!workers || !site || !KitWorkers.serves(site)) return await proposeTask(sites, spec);
  return acceptProposedTask(await workers.weighProposal(site.name, spec));
}

/**
 * Adds the proposal routes to the server's app.
 *
 * @param app the server's app
 * @param catalog its sites
 */
// deno-lint-ignore no-explicit-any
export function proposalRoutes(app: Hono<any>, catalog: Catalog): void {
  const sites = (): Record<string, SiteModule> =>
    Object.fromEntries(
      [...catalog.sites].filter(([, site]) => "templates" in site && "tracked" in site),
    ) as Record<string, SiteModule>;
  app.post("/v1/tasks/proposals", async (c: Context) => {
    let spec: unknown;
    try {
      spec = await c.req.json();
    } catch {
      throw new HttpError(400, "bad-request", "The proposal is not JSON");
    }
    // A seed out of range is refused as everywhere a seed enters (400), before
    // the proposal is weighed on data that no seed in range names.
    const seed = typeof spec === "object" && spec !== null ? Reflect.get(spec, "seed") : undefined;
    if (seed !== undefined && !isSeed(seed)) throw badSeed(seed);
    try {
      return c.json(body(await propose(sites(), spec, catalog.workers)), 201);
    } catch (error) {
      if (error instanceof ProposalError) throw new HttpError(422, "bad-proposal", error.message);
      if (error instanceof OffloadError) {
        throw new HttpError(503, error.failure === "busy" ? "busy" : error.code, error.message, {
          "Retry-After": "1",
        });
      }
      throw error;
    }
  });
  app.get("/v1/tasks/proposals", (c: Context) => {
    const site = c.req.query("site");
    return c.json({ proposals: listProposals(site).map(body) }, 200);
  });
}
