/**
 * The dashboard's main page, self-contained (inline CSS and script, no
 * external asset): a picker of the runs the server shows (`/dashboard/runs`;
 * the current one holds the live sessions), the picked run at a glance from
 * `/dashboard/stats` (polled, and refreshed after session events), filters,
 * the filtered episodes with
 * links to the viewer, and the live sessions' cards from
 * `/dashboard/events` (server-sent events) with their thumbnails.
 *
 * @module
 */

/** The style every dashboard page shares. */
export const DASHBOARD_STYLE =
  `body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #222; }
.card { border: 1px solid #ccc; border-radius: 6px; padding: .6rem; margin: .5rem 0; display: flex; gap: 1rem; }
.card img { width: 240px; height: 150px; object-fit: cover; object-position: top; border: 1px solid #eee; }
pre { background: #f6f6f6; padding: .5rem; max-height: 14rem; overflow: auto; font-size: 12px; white-space: pre-wrap; }
.ok, .success { color: #070; } .action_error, .agent { color: #a60; }
.env_error, .timeout, .expired, .infrastructure, .failure { color: #b00; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); gap: 1rem; }
.panel { border: 1px solid #ddd; border-radius: 6px; padding: .6rem; }
.panel h3 { margin: 0 0 .4rem; font-size: 14px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
td, th { text-align: left; padding: 2px 6px; border-bottom: 1px solid #eee; }
tr.nosignal { background: #fff3cd; }
.big { font-size: 22px; font-weight: 600; }
.filters select { margin-right: .5rem; }
svg rect { fill: #4a78c2; }`;

/** The main page. */
export const MAIN_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>WebServ dashboard</title><style>${DASHBOARD_STYLE}</style></head>
<body><h1>WebServ run</h1>
<p><a href="/docs">API docs</a> · <a id="viewer-link" href="/dashboard/viewer">Episode viewer</a> · <span id="count">0</span> live sessions</p>
<p id="unrecorded" hidden>No run directory (<code>--run-dir</code>): episodes are not recorded, so only the sessions' states are shown.</p>
<p class="filters">
<label>run <select id="f-run" data-filter="run"><option value="">current</option></select></label>
<label>site <select id="f-site" data-filter="site"><option value="">all</option></select></label>
<label>template <select id="f-template" data-filter="template"><option value="">all</option></select></label>
<label>split <select id="f-split" data-filter="split"><option value="">all</option></select></label>
<label>outcome <select id="f-outcome" data-filter="outcome"><option value="">all</option>
<option>success</option><option>failure</option><option>truncated</option><option>unfinished</option><option>running</option></select></label>
<label>error <select id="f-error" data-filter="error"><option value="">all</option></select></label>
</p>
<div class="grid">
<div class="panel"><h3>Sessions</h3><div id="lifecycle"></div></div>
<div class="panel"><h3>Throughput</h3><div id="throughput"></div><p>steps/s over time</p><div id="rate"></div><p>episodes/min over time</p><div id="rate-episodes"></div></div>
<div class="panel"><h3>Outcomes</h3><div id="outcomes"></div></div>
<div class="panel"><h3>Success per template</h3><table id="templates"></table></div>
<div class="panel"><h3>Success per site</h3><table id="sites"></table></div>
<div class="panel"><h3>Final reward</h3><div id="rewards"></div></div>
<div class="panel"><h3>Episode length (steps)</h3><div id="lengths"></div></div>
<div class="panel"><h3>Errors</h3><div id="errors"></div></div>
</div>
<div class="panel"><h3>GRPO groups</h3><table id="groups"></table></div>
<div class="panel"><h3>Episodes</h3><table id="episodes"></table></div>
<div id="live"><h2>Live sessions</h2>
<div id="sessions"></div></div>
<p id="past" hidden>A past run: its sessions are closed; pick the current run for the live ones.</p>
<script>
const token = new URLSearchParams(location.search).get("token");
const q = token ? "?token=" + encodeURIComponent(token) : "";
const cards = new Map();
function esc(s) { return String(s).replace(/[&<>"']/g, c => "&#" + c.charCodeAt(0) + ";"); }
function filters() {
  const p = new URLSearchParams(token ? { token } : {});
  for (const select of document.querySelectorAll("[data-filter]")) if (select.value) p.set(select.dataset.filter, select.value);
  return p;
}
function bars(bins, label) {
  if (!bins.length) return "<p>none yet</p>";
  const max = Math.max(...bins.map(b => b.count)) || 1;
  const w = 260 / bins.length;
  return '<svg width="270" height="90" role="img" aria-label="' + esc(label) + '">' + bins.map((b, i) =>
    '<rect x="' + (i * w) + '" y="' + (70 - 60 * b.count / max) + '" width="' + (w - 2) + '" height="' + (60 * b.count / max) +
    '" data-from="' + b.from + '" data-to="' + b.to + '" data-count="' + b.count + '"><title>' + b.from + "–" + b.to + ": " + b.count + "</title></rect>" +
    '<text x="' + (i * w) + '" y="84" font-size="9">' + b.from + "</text>").join("") + "</svg>" +
    '<p class="bins">' + bins.map(b => esc(b.from === b.to ? b.from : b.from + "–" + b.to) + ": " + b.count).join(" · ") + "</p>";
}
function successTable(rows) {
  return "<tr><th>key</th><th>episodes</th><th>solved</th><th>rate</th></tr>" + rows.map(r =>
    '<tr data-key="' + esc(r.key) + '"><td>' + esc(r.key) + '</td><td class="episodes">' + r.episodes + '</td><td class="successes">' +
    r.successes + '</td><td class="rate">' + Math.round(r.rate * 100) + "%</td></tr>").join("");
}
function choices(select, values) {
  const chosen = select.value;
  const have = new Set([...select.options].map(o => o.value));
  for (const v of values) if (!have.has(v)) select.append(new Option(v, v));
  select.value = chosen;
}
function span(r) {
  if (r.first === null) return "no episodes yet";
  const from = new Date(r.first), to = new Date(r.last ?? r.first);
  return from.toLocaleString() + " – " + (from.toDateString() === to.toDateString() ? to.toLocaleTimeString() : to.toLocaleString());
}
// The runs the server shows: the current one (its live sessions) and past
// ones beside it. Picking one scopes every figure, the episodes and the viewer.
function fillRuns(runs) {
  const select = document.getElementById("f-run");
  const chosen = select.value;
  select.length = 0;
  for (const r of runs) {
    const option = new Option(r.id + (r.current ? " (current)" : "") + " · " + r.episodes + " episodes · " + span(r), r.current ? "" : r.id);
    option.dataset.episodes = String(r.episodes);
    select.append(option);
  }
  if (chosen && !runs.some(r => r.id === chosen)) select.append(new Option(chosen, chosen));
  select.value = chosen;
}
function runChanged() {
  // Another run has other sites, templates and errors: the filters start again.
  for (const select of document.querySelectorAll("[data-filter]")) {
    if (select.id === "f-run") continue;
    select.value = "";
    if (select.id !== "f-outcome") select.length = 1;
  }
  const past = document.getElementById("f-run").value !== "";
  document.getElementById("live").hidden = past;
  document.getElementById("past").hidden = !past;
  const p = new URLSearchParams(token ? { token } : {});
  if (past) p.set("run", document.getElementById("f-run").value);
  document.getElementById("viewer-link").href = "/dashboard/viewer" + (p.size ? "?" + p : "");
  history.replaceState(null, "", p.get("run") ? "?" + p : location.pathname + q);
}
let polling = false, again = false;
async function refresh() {
  // A change while a poll is out (a run or filter picked) polls again after it.
  if (polling) { again = true; return; }
  polling = true;
  try {
    const p = filters();
    const [stats, list, runs] = await Promise.all([
      fetch("/dashboard/stats?" + p).then(r => r.json()),
      fetch("/dashboard/episodes?" + p).then(r => r.json()),
      fetch("/dashboard/runs" + q).then(r => r.json()),
    ]);
    if (p.get("run") !== (filters().get("run"))) return; // picked another run meanwhile
    fillRuns(runs.runs);
    document.body.dataset.run = p.get("run") ?? "";
    document.getElementById("unrecorded").hidden = stats.recorded;
    document.getElementById("lifecycle").innerHTML = Object.entries(stats.lifecycle).map(([k, v]) =>
      '<span class="phase" data-phase="' + k + '">' + k + ' <b>' + v + "</b></span>").join(" · ");
    document.getElementById("throughput").innerHTML = '<span class="big" id="steps-per-second">' + stats.stepsPerSecond +
      '</span> steps/s · <span class="big" id="episodes-per-minute">' + stats.episodesPerMinute + "</span> episodes/min" +
      '<br><span id="totals">' + stats.episodes + " episodes, " + stats.steps + " steps</span>";
    document.getElementById("rate").innerHTML = bars(stats.rate.map(r => { const at = new Date(r.t).toLocaleTimeString(); return { from: at, to: at, count: r.stepsPerSecond }; }), "steps per second over time");
    document.getElementById("rate-episodes").innerHTML = bars(stats.rate.map(r => { const at = new Date(r.t).toLocaleTimeString(); return { from: at, to: at, count: r.episodesPerMinute }; }), "episodes per minute over time");
    document.getElementById("outcomes").innerHTML = Object.entries(stats.outcomes).map(([k, v]) =>
      '<span class="' + k + '" data-outcome="' + k + '">' + k + " <b>" + v + "</b></span>").join(" · ");
    document.getElementById("templates").innerHTML = successTable(stats.templates);
    document.getElementById("sites").innerHTML = successTable(stats.sites);
    document.getElementById("rewards").innerHTML = bars(stats.rewards, "final rewards");
    document.getElementById("lengths").innerHTML = bars(stats.lengths, "episode lengths");
    document.getElementById("errors").innerHTML = ["agent", "infrastructure"].map(kind =>
      '<div class="' + kind + '"><b>' + (kind === "agent" ? "the agent's actions" : "infrastructure (ours)") + '</b><ul data-kind="' + kind + '">' +
      Object.entries(stats.errors[kind]).map(([code, n]) => '<li data-code="' + esc(code) + '">' + esc(code) + ": " + n + "</li>").join("") + "</ul></div>").join("");
    document.getElementById("groups").innerHTML = "<tr><th>group</th><th>task</th><th>rewards</th><th>mean</th><th>std</th><th>spread</th><th></th></tr>" +
      stats.groups.map(g => '<tr data-group="' + esc(g.group) + '" class="' + (g.noSignal ? "nosignal" : "") + '"><td>' + esc(g.group) + "</td><td>" + esc(g.task ?? "") +
        '</td><td class="rewards">' + g.rewards.join(", ") + "</td><td>" + (g.mean ?? "") + "</td><td>" + (g.std ?? "") + '</td><td class="spread">' + (g.spread ?? "") +
        '</td><td class="signal">' + (g.noSignal ? "no signal: all rewards equal" : "") + "</td></tr>").join("");
    document.getElementById("episodes").innerHTML = "<tr><th>session</th><th>episode</th><th>task</th><th>outcome</th><th>reward</th><th>steps</th><th>errors</th></tr>" +
      list.episodes.map(e => '<tr data-session="' + esc(e.session) + '" data-outcome="' + e.outcome + '"><td><a href="/dashboard/viewer?session=' +
        encodeURIComponent(e.session) + "&episode=" + e.episode + (p.get("run") ? "&run=" + encodeURIComponent(p.get("run")) : "") + (token ? "&token=" + encodeURIComponent(token) : "") + '">' + esc(e.session) + "</a></td><td>" + e.episode +
        "</td><td>" + esc(e.task ?? "") + '</td><td class="' + e.outcome + '">' + e.outcome + "</td><td>" + (e.reward ?? "") + "</td><td>" + e.steps + "</td><td>" +
        esc(e.errors.map(x => x.code).join(", ")) + "</td></tr>").join("");
    choices(document.getElementById("f-site"), stats.choices.sites);
    choices(document.getElementById("f-template"), stats.choices.templates);
    choices(document.getElementById("f-split"), stats.choices.splits);
    choices(document.getElementById("f-error"), stats.choices.errors);
    document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed ?? 0) + 1);
  } catch (error) {
    console.warn("stats", error);
  } finally {
    polling = false;
    if (again) { again = false; refresh(); }
  }
}
for (const select of document.querySelectorAll("[data-filter]")) select.addEventListener("change", () => { if (select.id === "f-run") runChanged(); refresh(); filterCards(); });
{
  // A run named in the address (a link, or a reload) is picked at once.
  const named = new URLSearchParams(location.search).get("run");
  if (named) { const select = document.getElementById("f-run"); select.append(new Option(named, named)); select.value = named; runChanged(); }
}
function cardShown(card) {
  const p = filters();
  const [site, template] = (card.dataset.task || "").split("/");
  return (!p.get("site") || p.get("site") === site) && (!p.get("template") || p.get("template") === template);
}
function filterCards() {
  for (const card of cards.values()) {
    card.hidden = !cardShown(card);
    if (!card.hidden && shots.get(card.dataset.session)?.stale) thumbnail(card.dataset.session, card.querySelector("img"));
  }
}
let soon;
function refreshSoon() { clearTimeout(soon); soon = setTimeout(refresh, 300); }
setInterval(refresh, 3000);
refresh();
function render(event) {
  let card = cards.get(event.session);
  if (event.type === "closed") { if (card) onScreen.unobserve(card); card?.remove(); cards.delete(event.session); shots.delete(event.session); count(); refreshSoon(); return; }
  if (!card) {
    card = document.createElement("div");
    card.className = "card";
    card.dataset.session = event.session;
    card.innerHTML = '<img alt="thumbnail"><div><h3><a></a></h3><p class="meta"></p><ol class="history"></ol><pre class="text"></pre></div>';
    card.querySelector("a").href = "/dashboard/viewer?session=" + encodeURIComponent(event.session) + (token ? "&token=" + encodeURIComponent(token) : "");
    card.querySelector("a").textContent = event.session;
    document.getElementById("sessions").append(card);
    cards.set(event.session, card);
    onScreen.observe(card);
  }
  const s = event.state;
  if (s) {
    card.dataset.task = s.task ? s.task.id : "";
    card.querySelector(".meta").textContent = (s.task ? s.task.id + " · " : "") + "step " + s.step + " · " + s.url + (s.rewards.length ? " · rewards " + s.rewards.join(",") : "");
  }
  card.hidden = !cardShown(card);
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
  refreshSoon();
}
// The screenshot route refuses query parameters it does not declare (a
// cache-busting "?t=" was answered 400, and the img stayed empty), and an img
// given the same URL again shows its cached picture: fetch it without the
// cache and show the bytes. One fetch per card at a time, at most one every
// two seconds, and only for cards on screen: a screenshot takes its turn
// among the session's operations, so a busy run is not slowed by its viewers.
const shots = new Map();
const onScreen = new IntersectionObserver((entries) => {
  for (const entry of entries) {
    const card = entry.target;
    card.dataset.visible = entry.isIntersecting ? "1" : "";
    if (entry.isIntersecting && shots.get(card.dataset.session)?.stale) thumbnail(card.dataset.session, card.querySelector("img"));
  }
});
async function thumbnail(id, img) {
  const shot = shots.get(id) ?? { busy: false, last: 0, again: false, stale: false };
  shots.set(id, shot);
  const card = cards.get(id);
  if (!card || !card.dataset.visible || card.hidden) { shot.stale = true; return; }
  shot.stale = false;
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
