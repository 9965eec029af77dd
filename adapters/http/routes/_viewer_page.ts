/**
 * The episode viewer, self-contained: pick a session and episode (from
 * `/dashboard/episodes`, filtered by task or seed), step through it with a
 * slider or the arrow keys, each step with its recorded screenshot (the
 * element marks recorded beside it drawn over it as inline SVG, with a
 * toggle, so the picture itself stays unmarked), the
 * observation text, the action, its result and timing; a second pane shows
 * another rollout of the same task beside it, stepped together. It reads
 * `/dashboard/trajectories/{id}`, so a finished run's files show as well as
 * live sessions', and fetches a live episode again every 2 s until it ends.
 *
 * @module
 */
import { DASHBOARD_STYLE } from "./_dashboard_page.ts";

/** The viewer page (`?session=ID&episode=N&compare=ID`). */
export const VIEWER_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>WebServ episode viewer</title><style>${DASHBOARD_STYLE}
.panes { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 1rem; }
.pane img { max-width: 100%; border: 1px solid #ddd; }
.shotbox { position: relative; display: inline-block; max-width: 100%; line-height: 0; }
.shotbox img { display: block; }
.shotbox svg.marks { position: absolute; left: 1px; top: 1px; width: calc(100% - 2px); height: calc(100% - 2px); pointer-events: none; }
svg.marks rect.box { fill: none; stroke-width: 2; vector-effect: non-scaling-stroke; }
svg.marks rect.tag { stroke: none; }
svg.marks text { fill: #fff; font: bold 12px sans-serif; }
body.nomarks svg.marks { display: none; }
.pane input[type=range] { width: 100%; }
</style></head>
<body><h1>Episode viewer</h1>
<p><a id="back" href="/">Run</a> <select id="run"><option value="">current</option></select> · task or seed contains <input id="search" size="24" placeholder="demo/add-note or /7"> · ← → step both panes · <label><input type="checkbox" id="marks" checked> element marks</label></p>
<div class="panes">
<div class="pane" id="pane-a"></div>
<div class="pane" id="pane-b"></div>
</div>
<script>
const params = new URLSearchParams(location.search);
const token = params.get("token");
const run = params.get("run") ?? "";
// The run and the token, carried on every request: "run=…&token=…" or "".
const t = [run ? "run=" + encodeURIComponent(run) : "", token ? "token=" + encodeURIComponent(token) : ""].filter(Boolean).join("&");
function esc(s) { return String(s).replace(/[&<>"']/g, c => "&#" + c.charCodeAt(0) + ";"); }
if (t) document.getElementById("back").href = "/?" + t;
// Another run: the viewer starts again on it.
document.getElementById("run").addEventListener("change", (event) => {
  const next = new URLSearchParams(token ? { token } : {});
  if (event.target.value) next.set("run", event.target.value);
  location.href = "/dashboard/viewer" + (next.size ? "?" + next : "");
});
fetch("/dashboard/runs" + (token ? "?token=" + encodeURIComponent(token) : "")).then(r => r.json()).then(body => {
  const select = document.getElementById("run");
  select.length = 0;
  for (const r of body.runs) select.append(new Option(r.id + (r.current ? " (current)" : "") + " · " + r.episodes + " episodes", r.current ? "" : r.id));
  if (run && !body.runs.some(r => r.id === run)) select.append(new Option(run, run));
  select.value = run;
});
let episodes = [];
const panes = {};
function makePane(name, session, episode) {
  const root = document.getElementById("pane-" + name);
  root.innerHTML = '<select class="pick"><option value="">' + (name === "a" ? "pick an episode" : "compare with…") + '</option></select>' +
    '<input type="range" class="slider" min="0" max="0" value="0"> <span class="position"></span>' +
    '<div class="step"></div>';
  const pane = { root, name, steps: [], index: 0 };
  panes[name] = pane;
  root.querySelector(".pick").addEventListener("change", (e) => {
    const [s, ep] = e.target.value.split("#");
    if (s) load(pane, s, Number(ep));
  });
  root.querySelector(".slider").addEventListener("input", (e) => show(pane, Number(e.target.value)));
  if (session) load(pane, session, episode);
  return pane;
}
function fillPickers() {
  const filter = document.getElementById("search").value.trim();
  for (const pane of Object.values(panes)) {
    const select = pane.root.querySelector(".pick");
    // The episode shown stays listed whatever the search.
    const chosen = pane.chosen ?? "";
    select.length = 1;
    if (chosen && !episodes.some(e => e.session + "#" + e.episode === chosen)) select.append(new Option(chosen.replace("#", " #"), chosen));
    for (const e of episodes) {
      if (filter && e.session + "#" + e.episode !== chosen && !((e.task ?? "") + " " + e.session).includes(filter)) continue;
      select.append(new Option(e.session + " #" + e.episode + " · " + (e.task ?? "no task") + " · " + e.outcome + (e.reward !== null ? " " + e.reward : ""), e.session + "#" + e.episode));
    }
    select.value = chosen;
  }
}
document.getElementById("search").addEventListener("input", fillPickers);
async function load(pane, session, episode) {
  const response = await fetch("/dashboard/trajectories/" + encodeURIComponent(session) + (t ? "?" + t : ""));
  const body = await response.json();
  const events = body.events ?? [];
  const last = Math.max(-1, ...events.filter(e => e.type === "start").map(e => e.episode ?? 0));
  const wanted = Number.isInteger(episode) && episode >= 0 ? episode : last;
  pane.session = session;
  pane.steps = events.filter(e => (e.episode ?? 0) === wanted && (e.type === "start" || e.type === "step"));
  pane.root.dataset.session = session;
  pane.root.dataset.steps = String(Math.max(0, pane.steps.length - 1));
  const slider = pane.root.querySelector(".slider");
  slider.max = String(Math.max(0, pane.steps.length - 1));
  const first = pane.chosen !== session + "#" + wanted;
  pane.chosen = session + "#" + wanted;
  pane.episode = wanted;
  pane.ended = events.some(e => e.type === "end") || events.some(e => e.type === "start" && (e.episode ?? 0) > wanted) ||
    pane.steps.some(e => e.done || e.truncated);
  fillPickers();
  // A reload of the same episode (a live one growing) keeps the step shown.
  show(pane, first ? 0 : pane.index);
  // The other pane offers rollouts of the same task first.
  const task = pane.steps[0]?.task;
  if (first && task && pane.name === "a" && !params.get("search")) {
    document.getElementById("search").value = task;
    fillPickers();
  }
}
function show(pane, index) {
  if (pane.steps.length === 0) { pane.root.querySelector(".step").innerHTML = "<p>No recorded steps.</p>"; return; }
  index = Math.max(0, Math.min(pane.steps.length - 1, index));
  pane.index = index;
  pane.root.querySelector(".slider").value = String(index);
  pane.root.dataset.index = String(index);
  pane.root.querySelector(".position").textContent = "step " + index + " of " + (pane.steps.length - 1);
  const e = pane.steps[index];
  let html = "";
  if (e.type === "start") {
    html += '<p><b>start</b> · episode ' + esc(e.episode) + " · " + esc(e.task ?? "no task") + " · " + esc(e.url ?? "") + "</p>";
    if (e.instruction) html += '<p class="instruction">' + esc(e.instruction) + "</p>";
  } else {
    html += '<p><b>step ' + esc(e.step) + '</b> · <code class="action">' + esc(JSON.stringify(e.action)) + '</code> → <span class="status ' + esc(e.status) + '">' + esc(e.status) + "</span>" +
      (e.reward !== undefined ? ' · reward <span class="reward">' + esc(e.reward) + "</span>" : "") +
      ' · <span class="elapsed">' + esc(e.elapsed_ms) + " ms</span>" + (e.settle ? " · settled " + esc(e.settle.settled) + " in " + esc(e.settle.elapsedMs ?? e.settle.elapsed_ms ?? "?") + " ms" : "") +
      (e.done ? " · done" : "") + (e.truncated ? " · truncated" : "") + "</p>";
    if (e.error) html += '<p class="error ' + esc(e.status) + '">' + esc(e.error.code) + ": " + esc(e.error.message) + "</p>";
    if (e.verdict) html += '<p class="verdict">verdict: reward ' + esc(e.verdict.reward) + " — " + esc(e.verdict.reason) + "</p>";
    html += "<p>" + esc(e.url ?? "") + "</p>";
  }
  if (e.screenshot) html += '<div class="shotbox"><img class="shot" alt="screenshot after the step" src="/dashboard/files/' + esc(e.screenshot) + (t ? "?" + t : "") + '">' + marksSvg(e.marks) + "</div>";
  else if (e.type === "step" && e.done) html += '<p class="noshot">The episode ended here: no screenshot is taken after its last step.</p>';
  else if (e.type === "step") html += '<p class="noshot">No screenshot recorded (open sessions with <code>record_screenshots: true</code>).</p>';
  html += '<pre class="observation">' + esc(e.observation ?? "") + "</pre>";
  pane.root.querySelector(".step").innerHTML = html;
  const img = pane.root.querySelector("img.shot");
  if (img && e.marks) {
    // The boxes are CSS pixels of the viewport; the picture may be in device
    // pixels: its width is the viewport's, its height follows its own ratio
    // (as the engine's own set-of-marks scales them).
    const fit = () => { if (img.naturalWidth > 0) img.nextElementSibling.setAttribute("viewBox", "0 0 " + e.marks.viewport[0] + " " + (e.marks.viewport[0] * img.naturalHeight / img.naturalWidth)); };
    if (img.complete) fit(); else img.addEventListener("load", fit);
  }
}
const PALETTE = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#e377c2", "#8c564b"];
// Set-of-marks drawn over the raw screenshot: each element id's box and its label.
function marksSvg(marks) {
  if (!marks || !Array.isArray(marks.elements)) return "";
  const [w, h] = marks.viewport;
  let svg = '<svg class="marks" viewBox="0 0 ' + esc(w) + " " + esc(h) + '" preserveAspectRatio="none">';
  for (const m of marks.elements) {
    const [x, y, bw, bh] = m.box;
    const color = PALETTE[m.id % PALETTE.length];
    const label = String(m.id);
    const tagW = 8 * label.length + 6;
    const tagY = y >= 16 ? y - 16 : y;
    svg += '<g class="mark" data-id="' + esc(m.id) + '"><rect class="box" x="' + esc(x) + '" y="' + esc(y) + '" width="' + esc(bw) + '" height="' + esc(bh) + '" stroke="' + color + '"/>' +
      '<rect class="tag" x="' + esc(x) + '" y="' + esc(tagY) + '" width="' + tagW + '" height="16" fill="' + color + '"/>' +
      '<text x="' + esc(x + 3) + '" y="' + esc(tagY + 12.5) + '">' + esc(label) + "</text></g>";
  }
  return svg + "</svg>";
}
document.getElementById("marks").addEventListener("change", (event) => document.body.classList.toggle("nomarks", !event.target.checked));
document.addEventListener("keydown", (event) => {
  if (event.target instanceof HTMLInputElement && event.target.type === "text") return;
  const delta = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
  if (!delta) return;
  event.preventDefault();
  for (const pane of Object.values(panes)) if (pane.steps.length) show(pane, pane.index + delta);
});
// A live episode grows: its steps are fetched again every 2 s until it ends.
setInterval(() => {
  for (const pane of Object.values(panes)) if (pane.session && !pane.ended) load(pane, pane.session, pane.episode);
}, 2000);
makePane("a", params.get("session"), params.has("episode") ? Number(params.get("episode")) : undefined);
makePane("b", params.get("compare"), undefined);
if (params.get("search")) document.getElementById("search").value = params.get("search");
fetch("/dashboard/episodes?limit=1000" + (t ? "&" + t : "")).then(r => r.json()).then(body => { episodes = body.episodes; fillPickers(); });
</script></body></html>`;
