/**
 * The dashboard, served by the rollout server: `/` shows a run at a
 * glance (`/dashboard/stats`, computed from the trajectory files and the
 * live sessions, filtered by site, template, split, outcome and error; the
 * run picked from `/dashboard/runs` with `?run=`, the one recorded by
 * default), the
 * filtered episodes (`/dashboard/episodes`) and the live sessions with
 * thumbnails, updated from `/dashboard/events` (server-sent events);
 * `/dashboard/viewer` steps through recorded episodes
 * (`/dashboard/trajectories/{id}`), two side by side;
 * `/dashboard/sessions/{id}` lists one session's trajectory as plain HTML.
 * Self-contained pages, no CDN. With a bearer token, pages pass it on as
 * `?token=` (EventSource and images cannot send headers).
 *
 * @module
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { streamSSE } from "hono/streaming";
import { logFailure } from "../../../engine/log.ts";
import { insideRun, plainName, readTrajectory } from "../_run_files.ts";
import type { SessionEvent, SessionManager } from "../sessions.ts";
import type { TrajectoryEvent, TrajectoryLog } from "../trajectory.ts";
import { HttpError } from "../http_error.ts";
import type { Outcome } from "../_run_episodes.ts";
import type { RunFilter } from "../_run_stats.ts";
import { RunCatalog } from "../_run_catalog.ts";
import type { RunView } from "../_run_view.ts";
import { passes } from "../_run_stats.ts";
import { DASHBOARD_STYLE, MAIN_PAGE } from "./_dashboard_page.ts";
import { VIEWER_PAGE } from "./_viewer_page.ts";
import { listRuns, runEpisodes, runStatsRoute, sessionTrajectory } from "./_dashboard_api.ts";

/** What the dashboard shows. */
export interface DashboardOptions {
  /** The live sessions, which belong to the run this server records. */
  sessions: SessionManager;
  /** Where this server records trajectories; none when it records nothing. */
  trajectories?: TrajectoryLog | undefined;
  /**
   * Other runs to list, read only: run directories, or parents holding runs.
   *
   * @default {[]}
   */
  runs?: readonly string[];
}

/**
 * Adds the dashboard's routes to the app.
 *
 * @param app the app
 * @param options the sessions, the run recorded and the other runs
 */
export function mountDashboard(app: OpenAPIHono, options: DashboardOptions): void {
  const { sessions, trajectories } = options;
  const runs = new RunCatalog(sessions, trajectories?.directory, options.runs ?? []);
  /** A session's lines in a run: the recorded run's once its pending writes are done. */
  const linesOf = async (view: RunView, id: string): Promise<TrajectoryEvent[]> => {
    if (view === runs.current) return trajectories ? await trajectories.read(id) : [];
    return view.directory === undefined ? [] : await readTrajectory(view.directory, id);
  };
  app.get("/", (c) => c.html(MAIN_PAGE));
  app.get("/dashboard/viewer", (c) => c.html(VIEWER_PAGE));
  app.openapi(listRuns, async (c) => c.json({ runs: await runs.list() }, 200));
  app.openapi(runStatsRoute, async (c) => {
    const query = c.req.valid("query");
    const view = await runs.view(query.run);
    return c.json({ ...await view.stats(runFilter(query)) } as Record<string, unknown>, 200);
  });
  app.openapi(runEpisodes, async (c) => {
    const query = c.req.valid("query");
    const filter = runFilter(query);
    const limit = boundedLimit(query.limit);
    const { episodes } = await (await runs.view(query.run)).episodes();
    const chosen = episodes.filter((e) => passes(e, filter));
    return c.json({
      total: chosen.length,
      // Newest first; the step times are the figures' business, not the list's.
      episodes: chosen.slice(-limit).reverse().map(({ stepTimes: _times, ...episode }) =>
        ({ ...episode }) as Record<string, unknown>
      ),
    }, 200);
  });
  app.openapi(sessionTrajectory, async (c) => {
    const id = plainName(c.req.valid("param").id, "session id");
    const view = await runs.view(c.req.valid("query").run);
    if (view === runs.current) await trajectories?.flush();
    const events = await linesOf(view, id);
    if (events.length === 0) {
      return c.json({
        code: "not-found",
        message: view.recorded
          ? `No trajectory for session "${id}"`
          : "No run directory: start the server with --run-dir to record trajectories",
      }, 404);
    }
    return c.json({ session: id, events }, 200);
  });
  app.get("/dashboard/events", (c) =>
    streamSSE(c, async (stream) => {
      const queue: SessionEvent[] = [];
      let wake: (() => void) | undefined;
      const stop = sessions.subscribe((event) => {
        queue.push(event);
        wake?.();
      });
      stream.onAbort(() => {
        stop();
        wake?.();
      });
      // Each entry serialised alone: one that cannot be is left out, the others sent.
      const snapshot = sessions.list().flatMap((state) => {
        const entry = serialised({
          type: "created",
          session: state.id,
          state,
          ...sessions.history(state.id),
        });
        return entry === undefined ? [] : [entry];
      });
      await stream.writeSSE({ event: "snapshot", data: `[${snapshot.join(",")}]` });
      while (!stream.aborted && !stream.closed && !sessions.closing) {
        if (queue.length === 0) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            setTimeout(resolve, 15_000);
          });
          wake = undefined;
          if (sessions.closing) break;
          if (queue.length === 0) {
            await stream.writeSSE({ event: "ping", data: "{}" });
            continue;
          }
        }
        const data = serialised(queue.shift()!);
        if (data !== undefined) await stream.writeSSE({ event: "session", data });
      }
      stop();
    }));
  app.get("/dashboard/files/screenshots/:name", async (c) => {
    const name = plainName(c.req.param("name"), "screenshot name");
    const directory = (await runs.view(c.req.query("run"))).directory;
    const file = directory !== undefined && name.endsWith(".png")
      ? await insideRun(directory, `screenshots/${name}`)
      : undefined;
    const png = file === undefined ? undefined : await Deno.readFile(file).catch(() => undefined);
    if (png === undefined) {
      return c.json({ code: "not-found", message: `No screenshot "${name}"` }, 404);
    }
    return c.body(png.slice().buffer, 200, { "content-type": "image/png" });
  });
  app.get("/dashboard/sessions/:id", async (c) => {
    const id = plainName(c.req.param("id"), "session id");
    const view = await runs.view(c.req.query("run"));
    const events = await linesOf(view, id);
    let live: ReturnType<SessionManager["history"]> | undefined;
    try {
      // Only the recorded run's sessions can be live.
      live = view === runs.current ? sessions.history(id) : undefined;
    } catch {
      live = undefined;
    }
    // The page's pictures are asked for with the same run (and token) as the page.
    const carried = new URLSearchParams();
    for (const name of ["run", "token"]) {
      const value = c.req.query(name);
      if (value) carried.set(name, value);
    }
    return c.html(sessionPage(id, events, live, carried.size ? `?${carried}` : ""));
  });
}

/**
 * An event as JSON, or `undefined` (counted and logged) when it cannot be
 * serialised: the stream skips it and goes on.
 */
function serialised(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch (error) {
    logFailure("serialise a dashboard event", error);
    return undefined;
  }
}

function sessionPage(
  id: string,
  events: Record<string, unknown>[],
  live: ReturnType<SessionManager["history"]> | undefined,
  query: string,
): string {
  const rows = events.length > 0
    ? events.map((event) =>
      `<li class="${escape(String(event.status ?? ""))}"><b>${escape(String(event.type))}</b> ${
        event.type === "step"
          ? `step ${event.step}: <code>${escape(serialised(event.action) ?? "")}</code> → ${
            escape(String(event.status))
          }${event.reward !== undefined ? ` (reward ${event.reward})` : ""}${
            event.error ? ` — ${escape((event.error as { message: string }).message)}` : ""
          }`
          : escape(String(event.task ?? event.reason ?? ""))
      }${event.observation ? `<pre>${escape(String(event.observation))}</pre>` : ""}${
        event.screenshot
          ? `<br><img src="/dashboard/files/${escape(String(event.screenshot))}${escape(query)}">`
          : ""
      }</li>`
    ).join("\n")
    : (live?.history ?? []).map((h) =>
      `<li class="${escape(h.status)}">step ${h.step}: <code>${
        escape(serialised(h.action) ?? "")
      }</code> → ${escape(h.status)}${h.reward !== undefined ? ` (reward ${h.reward})` : ""}</li>`
    ).join("\n");
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Session ${
    escape(id)
  }</title><style>${DASHBOARD_STYLE}</style></head>
<body><h1>Session ${escape(id)}</h1><p><a href="/">All sessions</a></p>
${live ? `<h2>Last observation</h2><pre>${escape(live.text)}</pre>` : "<p>Closed.</p>"}
<h2>Trajectory</h2><ol id="trajectory">${rows}</ol></body></html>`;
}

const OUTCOMES: readonly Outcome[] = ["success", "failure", "truncated", "unfinished", "running"];
const FILTERS = ["site", "template", "split", "outcome", "error"] as const;

/**
 * The dashboard's filter from a query: each field a short string, the
 * outcome one of the known ones.
 */
function runFilter(query: { [K in (typeof FILTERS)[number]]?: string | undefined }): RunFilter {
  const filter: RunFilter = {};
  for (const name of FILTERS) {
    const value = query[name];
    if (value === undefined || value === "") continue;
    if (value.length > 200) {
      throw new HttpError(400, "bad-request", `The filter "${name}" is longer than 200 characters`);
    }
    if (name === "outcome") {
      if (!(OUTCOMES as readonly string[]).includes(value)) {
        throw new HttpError(
          400,
          "bad-request",
          `Unknown outcome "${value}": expected one of ${OUTCOMES.join(", ")}`,
        );
      }
      filter.outcome = value as Outcome;
    } else filter[name] = value;
  }
  return filter;
}

/** `?limit=`: 1 to 1000, 200 when absent. */
function boundedLimit(text: string | undefined): number {
  if (text === undefined) return 200;
  const limit = Number(text);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new HttpError(
      400,
      "bad-request",
      `Invalid limit "${text.slice(0, 20)}": expected 1 to 1000`,
    );
  }
  return limit;
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
