/**
 * The dashboard, served by the rollout server: `/` lists live sessions
 * with screenshot thumbnails, their last observation, action history and
 * rewards, updated live from `/dashboard/events` (server-sent events);
 * `/dashboard/sessions/{id}` shows one session's trajectory step by step.
 * Self-contained pages, no CDN. With a bearer token, pages pass it on as
 * `?token=` (EventSource and images cannot send headers).
 *
 * @module
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { streamSSE } from "hono/streaming";
import { logFailure } from "../../../engine/log.ts";
import { insideRun, plainName } from "../_run_files.ts";
import type { SessionEvent, SessionManager } from "../sessions.ts";
import type { TrajectoryLog } from "../trajectory.ts";

/**
 * Adds the dashboard's routes to the app.
 *
 * @param app the app
 * @param sessions the sessions
 * @param trajectories the trajectories, for the session page
 */
export function mountDashboard(
  app: OpenAPIHono,
  sessions: SessionManager,
  trajectories: TrajectoryLog | undefined,
): void {
  app.get("/", (c) => c.html(LIST_PAGE));
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
    const file = trajectories && name.endsWith(".png")
      ? await insideRun(trajectories.directory, `screenshots/${name}`)
      : undefined;
    const png = file === undefined ? undefined : await Deno.readFile(file).catch(() => undefined);
    if (png === undefined) {
      return c.json({ code: "not-found", message: `No screenshot "${name}"` }, 404);
    }
    return c.body(png.slice().buffer, 200, { "content-type": "image/png" });
  });
  app.get("/dashboard/sessions/:id", async (c) => {
    const id = plainName(c.req.param("id"), "session id");
    const events = trajectories ? await trajectories.read(id) : [];
    let live: ReturnType<SessionManager["history"]> | undefined;
    try {
      live = sessions.history(id);
    } catch {
      live = undefined;
    }
    return c.html(sessionPage(id, events, live));
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

const STYLE = `body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; }
.card { border: 1px solid #ccc; border-radius: 6px; padding: .6rem; margin: .5rem 0; display: flex; gap: 1rem; }
.card img { width: 240px; height: 150px; object-fit: cover; object-position: top; border: 1px solid #eee; }
pre { background: #f6f6f6; padding: .5rem; max-height: 14rem; overflow: auto; font-size: 12px; white-space: pre-wrap; }
.ok { color: #070; } .action_error { color: #a60; } .env_error, .timeout, .expired { color: #b00; }`;

const LIST_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>WebServ dashboard</title><style>${STYLE}</style></head>
<body><h1>WebServ sessions</h1>
<p><a href="/docs">API docs</a> · <span id="count">0</span> live</p>
<div id="sessions"></div>
<script>
const token = new URLSearchParams(location.search).get("token");
const q = token ? "?token=" + encodeURIComponent(token) : "";
const cards = new Map();
function esc(s) { return String(s).replace(/[&<>"']/g, c => "&#" + c.charCodeAt(0) + ";"); }
function render(event) {
  let card = cards.get(event.session);
  if (event.type === "closed") { card?.remove(); cards.delete(event.session); count(); return; }
  if (!card) {
    card = document.createElement("div");
    card.className = "card";
    card.dataset.session = event.session;
    card.innerHTML = '<img alt="thumbnail"><div><h3><a></a></h3><p class="meta"></p><ol class="history"></ol><pre class="text"></pre></div>';
    card.querySelector("a").href = "/dashboard/sessions/" + event.session + q;
    card.querySelector("a").textContent = event.session;
    document.getElementById("sessions").append(card);
    cards.set(event.session, card);
  }
  const s = event.state;
  if (s) card.querySelector(".meta").textContent = (s.task ? s.task.id + " · " : "") + "step " + s.step + " · " + s.url + (s.rewards.length ? " · rewards " + s.rewards.join(",") : "");
  if (event.text !== undefined) card.querySelector(".text").textContent = event.text;
  const items = event.history ?? (event.step ? [event.step] : []);
  for (const h of items) {
    const li = document.createElement("li");
    li.className = h.status;
    li.textContent = JSON.stringify(h.action) + " → " + h.status + (h.reward !== undefined ? " (reward " + h.reward + ")" : "");
    card.querySelector(".history").append(li);
  }
  thumbnail(event.session, card.querySelector("img"));
  count();
}
// The screenshot route refuses query parameters it does not declare (a
// cache-busting "?t=" was answered 400, and the img stayed empty), and an img
// given the same URL again shows its cached picture: fetch it without the
// cache and show the bytes. One fetch per card at a time, at most one every
// two seconds, so a busy run is not slowed by its viewers.
const shots = new Map();
async function thumbnail(id, img) {
  const shot = shots.get(id) ?? { busy: false, last: 0, again: false };
  shots.set(id, shot);
  if (shot.busy || Date.now() - shot.last < 2000) {
    if (!shot.again) { shot.again = true; setTimeout(() => { shot.again = false; thumbnail(id, img); }, 2000); }
    return;
  }
  shot.busy = true;
  shot.last = Date.now();
  try {
    const response = await fetch("/v1/sessions/" + encodeURIComponent(id) + "/screenshot" + q, { cache: "no-store" });
    if (!response.ok) return;
    const url = URL.createObjectURL(await response.blob());
    const old = img.src;
    img.src = url;
    if (old.startsWith("blob:")) URL.revokeObjectURL(old);
  } catch (error) {
    console.warn("thumbnail", id, error);
  } finally {
    shot.busy = false;
  }
}
function count() { document.getElementById("count").textContent = cards.size; }
const source = new EventSource("/dashboard/events" + q);
source.addEventListener("snapshot", (e) => JSON.parse(e.data).forEach(render));
source.addEventListener("session", (e) => render(JSON.parse(e.data)));
</script></body></html>`;

function sessionPage(
  id: string,
  events: Record<string, unknown>[],
  live: ReturnType<SessionManager["history"]> | undefined,
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
          ? `<br><img src="/dashboard/files/${escape(String(event.screenshot))}">`
          : ""
      }</li>`
    ).join("\n")
    : (live?.history ?? []).map((h) =>
      `<li class="${escape(h.status)}">step ${h.step}: <code>${
        escape(serialised(h.action) ?? "")
      }</code> → ${escape(h.status)}${h.reward !== undefined ? ` (reward ${h.reward})` : ""}</li>`
    ).join("\n");
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Session ${escape(id)}</title><style>${STYLE}</style></head>
<body><h1>Session ${escape(id)}</h1><p><a href="/">All sessions</a></p>
${live ? `<h2>Last observation</h2><pre>${escape(live.text)}</pre>` : "<p>Closed.</p>"}
<h2>Trajectory</h2><ol id="trajectory">${rows}</ol></body></html>`;
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
