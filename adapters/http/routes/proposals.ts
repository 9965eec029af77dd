/**
 * Task proposals through the server: `POST /v1/tasks/proposals`
 * validates a declarative task spec on its seed's data
 * (`fixtures/sites/kit/proposals.ts`: the read runs through the site's state
 * API, the truth is unique and non-empty, the op is in the closed set, the
 * instruction does not hold the truth, the blind controls earn 0) and answers
 * 201 with the task it became, unproven; a refused proposal gets 422 with the
 * reason. A `startUrl` that is not a path on the site (`//host`, `/\host`,
 * an absolute URL) is bad input: 400 `bad-start-url`. `GET /v1/tasks/proposals` lists the accepted ones, oldest first, a
 * page at a time (`?limit=` up to 1,000, 100 by default; `?cursor=` the
 * previous page's `next_cursor`). Truths are never sent back.
 *
 * Bounds: a proposal's body is at most 16 KiB (413 `proposal-too-large`:
 * a real instruction and read fit in far less); the server takes at most
 * `proposalsPerMinute` (30) proposals a minute, from all its clients
 * together (a bearer header names no client: see `PROPOSER`), past which 429 `proposal-rate`
 * with `Retry-After` (a proposal seeds data and runs every control, and
 * each acceptance or refusal answers a question about the data); the
 * process keeps at most
 * `maxProposals` (1,000), the oldest retired past it (see
 * `fixtures/sites/kit/_proposal_store.ts`).
 *
 * @module
 */
import type { Context, Hono } from "hono";
import {
  type AcceptedProposal,
  acceptProposedTask,
  isSeed,
  isSitePath,
  KitWorkers,
  OffloadError,
  pageProposals,
  ProposalError,
  proposeTask,
} from "../../../fixtures/sites/kit/mod.ts";
import type { SiteModule } from "../../../fixtures/sites/mod.ts";
import { badSeed, type Catalog } from "../catalog.ts";
import { HttpError } from "../http_error.ts";
import { RateLimit } from "../_rate_limit.ts";

/** How many proposals one client may make in a minute, by default. */
export const PROPOSALS_PER_MINUTE = 30;

/**
 * Whom the proposal rate counts: every proposal of the server together. The
 * server knows one token at most, so a token names no client: on a server
 * with one, every client carries it; on an open server, a bearer header is
 * whatever the caller writes, and counting each header apart let one caller
 * make 1,000 proposals a minute under 1,000 made-up tokens.
 */
const PROPOSER = "server";

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

/** The largest proposal body, in bytes. */
export const MAX_PROPOSAL_BYTES = 16 * 1024;

/** How many proposals a page lists by default, and at most. */
const PAGE = { default: 100, max: 1_000 };

/** A whole number query parameter within bounds, or 400. */
function whole(value: string | undefined, name: string, min: number, max: number) {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value === "" || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new HttpError(
      400,
      "bad-request",
      `"${name}" must be a whole number from ${min} to ${max}`,
    );
  }
  return n;
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
 * @param perMinute how many proposals one client may make in a minute
 */
export function proposalRoutes(
  // deno-lint-ignore no-explicit-any
  app: Hono<any>,
  catalog: Catalog,
  perMinute: number = PROPOSALS_PER_MINUTE,
): void {
  const rate = new RateLimit({ limit: perMinute });
  const sites = (): Record<string, SiteModule> =>
    Object.fromEntries(
      [...catalog.sites].filter(([, site]) => "templates" in site && "tracked" in site),
    ) as Record<string, SiteModule>;
  app.post("/v1/tasks/proposals", async (c: Context) => {
    const wait = rate.take(PROPOSER);
    if (wait > 0) {
      throw new HttpError(
        429,
        "proposal-rate",
        `At most ${perMinute} proposals a minute on this server; retry after the pause`,
        { "Retry-After": String(Math.ceil(wait / 1000)) },
      );
    }
    // The body door (`_json_body.ts`) read and checked the body: its text is in Hono's cache.
    const text = await c.req.text();
    if (new TextEncoder().encode(text).byteLength > MAX_PROPOSAL_BYTES) {
      throw new HttpError(
        413,
        "proposal-too-large",
        `A proposal is at most ${MAX_PROPOSAL_BYTES} bytes of JSON`,
      );
    }
    let spec: unknown;
    try {
      spec = JSON.parse(text);
    } catch {
      throw new HttpError(400, "bad-request", "The proposal is not JSON");
    }
    const startUrl = (spec as { startUrl?: unknown } | null)?.startUrl;
    if (startUrl !== undefined && (typeof startUrl !== "string" || !isSitePath(startUrl))) {
      throw new HttpError(
        400,
        "bad-start-url",
        `Invalid startUrl ${JSON.stringify(startUrl)?.slice(0, 200)}: expected a path on the ` +
          'site such as "/" or "/forums/1" (one leading "/", no host, no backslash)',
      );
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
    const limit = whole(c.req.query("limit"), "limit", 1, PAGE.max) ?? PAGE.default;
    const after = whole(c.req.query("cursor"), "cursor", 0, Number.MAX_SAFE_INTEGER);
    const page = pageProposals({
      ...(site !== undefined ? { site } : {}),
      ...(after !== undefined ? { after } : {}),
      limit,
    });
    return c.json({
      proposals: page.proposals.map(body),
      next_cursor: page.next === null ? null : String(page.next),
    }, 200);
  });
}
