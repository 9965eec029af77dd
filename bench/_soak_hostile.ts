/**
 * The soak's hostile policies: each `round` is one thing an adversarial
 * agent does (random actions on random ids, 100k-character answers, 100k-deep
 * JSON, unknown and stale ids, a WebSocket flood that disconnects, seed
 * fan-out, task listing deep into the test split, proposal spam, batches
 * and groups, half-open TCP connections). Every request goes through the
 * ledger, and every session opened is closed again (the flood's by its
 * disconnect).
 *
 * @module
 */
import { type Call, type Ledger, random } from "./_soak_client.ts";

/** What the hostile actors share. */
export interface HostileContext {
  ledger: Ledger;
  port: number;
  /** Sessions hostile actors closed: stale ids to send steps to. */
  closed: string[];
  /** Half-open connections now held, and the cap. */
  halfOpen: { held: Set<Deno.Conn>; max: number };
  /** Kinds run, with counts. */
  rounds: Map<string, number>;
  /** The recreated sites the actors open sessions on, beside the demo. */
  sites: string[];
  /** Whether the run is stopping: no new floods or long holds. */
  stopping: () => boolean;
}

type Round = (ctx: HostileContext, next: () => number, actor: string) => Promise<void>;

const ELEMENT_ACTIONS = ["click", "dblclick", "hover", "check", "uncheck"] as const;
const LONG = 100_000;
/** Information tasks, whose verifier reads the answer. */
const INFORMATION = [
  "forum/bigger-forum/1",
  "shop/star-count/2",
  "admin/status-count/3",
  "wiki/entry-views/4",
];

function pick<T>(next: () => number, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)]!;
}

/** A random action, valid or not, on a random element id. */
function randomAction(next: () => number, origin: string): Record<string, unknown> {
  const id = Math.floor(next() * 120);
  const r = next();
  if (r < 0.35) return { action: pick(next, ELEMENT_ACTIONS), id };
  if (r < 0.45) return { action: "type", id, text: "x".repeat(Math.floor(next() * 3000)) };
  if (r < 0.5) return { action: "press", keys: pick(next, ["Enter", "Control+A", "Tab", "F12"]) };
  if (r < 0.55) return { action: "select", id, option: "nope" };
  if (r < 0.6) return { action: "scroll", direction: pick(next, ["up", "down"]), amount: 900 };
  if (r < 0.7) {
    return {
      action: "goto",
      url: pick(next, [
        `${origin}/`,
        `${origin}/${"a/".repeat(200)}`,
        "http://127.0.0.1:1/",
        "file:///etc/passwd",
        "http://example.com/",
        "javascript:while(1){}",
      ]),
    };
  }
  if (r < 0.8) return { action: pick(next, ["back", "forward", "reload"]) };
  if (r < 0.85) return { action: "switch_tab", tab: Math.floor(next() * 5) };
  if (r < 0.9) return { action: "upload", id, files: ["/etc/shadow"] };
  if (r < 0.95) return { action: "jump", id, zzz: { unknown: [1, 2, 3] } };
  return { action: "click", id, unknown_field: "x".repeat(1000) };
}

/** Opens a session for a hostile actor; undefined when refused (capacity). */
async function open(
  ctx: HostileContext,
  actor: string,
  spec: Record<string, unknown>,
): Promise<{ id: string; origin: string } | undefined> {
  const { status, body } = await ctx.ledger.call({
    actor,
    kind: "create",
    method: "POST",
    path: "/v1/sessions",
    body: JSON.stringify(spec),
  });
  if (status !== 200 && status !== 201) return undefined;
  const created = body as { id: string; observation: { url: string } };
  ctx.ledger.opened(created.id, actor);
  return { id: created.id, origin: new URL(created.observation.url).origin };
}

async function close(ctx: HostileContext, actor: string, id: string): Promise<void> {
  await ctx.ledger.call({
    actor,
    kind: "close",
    method: "DELETE",
    path: `/v1/sessions/${encodeURIComponent(id)}`,
  });
  ctx.closed.push(id);
  if (ctx.closed.length > 200) ctx.closed.shift();
}

const randomActions: Round = async (ctx, next, actor) => {
  const site = pick(next, ["demo", ...ctx.sites]);
  const spec = site === "demo"
    ? { task: "demo/add-note/1" }
    : { site, seed: Math.floor(next() * 5) };
  const session = await open(ctx, actor, spec);
  if (!session) return;
  for (let i = 0; i < 15; i++) {
    await ctx.ledger.step(actor, session.id, randomAction(next, session.origin));
  }
  await close(ctx, actor, session.id);
};

const longAnswers: Round = async (ctx, next, actor) => {
  const tasks = INFORMATION.filter((t) => ctx.sites.includes(t.split("/")[0]!));
  const task = tasks.length ? pick(next, tasks) : "demo/add-note/1";
  const session = await open(ctx, actor, { task });
  if (!session) return;
  const [shape, answer] = pick(next, [
    () => ["letters", "a".repeat(LONG)],
    () => ["ones", "1 ".repeat(LONG / 2)],
    () => ["commas", "a, ".repeat(LONG / 3)],
    () => ["numbers", Array.from({ length: LONG / 6 }, (_, i) => String(i)).join(" ")],
  ])();
  await ctx.ledger.step(actor, session.id, { action: "stop", answer }, undefined, `stop-${shape}`);
  await close(ctx, actor, session.id);
};

/** `depth` nested arrays or objects inside an action, as raw JSON text. */
function deep(depth: number, objects: boolean): string {
  return objects
    ? '{"a":'.repeat(depth) + "0" + "}".repeat(depth)
    : "[".repeat(depth) + "]".repeat(depth);
}

const deepJson: Round = async (ctx, next, actor) => {
  const depth = pick(next, [1_000, 10_000, LONG]);
  const objects = next() < 0.5;
  // Where the deep value goes: a session spec, a live session's step, a batch.
  const where = Math.floor(next() * 3);
  if (where === 0) {
    await ctx.ledger.call({
      actor,
      kind: `create-deep-${objects ? "objects" : "arrays"}-${depth}`,
      method: "POST",
      path: "/v1/sessions",
      body: `{"site":"demo","zzz":${deep(depth, objects)}}`,
    });
    return;
  }
  const session = await open(ctx, actor, { task: "demo/add-note/1" });
  if (!session) return;
  if (where === 1) {
    await ctx.ledger.step(
      actor,
      session.id,
      undefined,
      `{"action":{"action":"click","id":1,"x":${deep(depth, objects)}}}`,
      `step-deep-${objects ? "objects" : "arrays"}-${depth}`,
    );
  } else {
    await ctx.ledger.call({
      actor,
      kind: `batch-deep-${objects ? "objects" : "arrays"}-${depth}`,
      method: "POST",
      path: "/v1/batch/step",
      body: `{"steps":[{"session_id":"${session.id}","action":${deep(depth, objects)}}]}`,
    });
  }
  await close(ctx, actor, session.id);
};

const staleIds: Round = async (ctx, next, actor) => {
  const ids = [...ctx.closed.slice(-20), "s-unknown", "", "%00", "..%2F..", "x".repeat(300)];
  for (let i = 0; i < 10; i++) {
    const id = pick(next, ids);
    const path = `/v1/sessions/${encodeURIComponent(id)}`;
    const r = next();
    if (r < 0.5) await ctx.ledger.step(actor, id, { action: "click", id: 3 });
    else if (r < 0.65) {
      await ctx.ledger.call({ actor, kind: "reset-stale", method: "POST", path: `${path}/reset` });
    } else if (r < 0.8) {
      await ctx.ledger.call({
        actor,
        kind: "verify-stale",
        method: "POST",
        path: `${path}/verify`,
      });
    } else if (r < 0.9) {
      await ctx.ledger.call({
        actor,
        kind: "observe-stale",
        method: "GET",
        path: `${path}/observe`,
      });
    } else await ctx.ledger.call({ actor, kind: "close-stale", method: "DELETE", path });
  }
};

const seedFanout: Round = async (ctx, next, actor) => {
  for (let i = 0; i < 3; i++) {
    const site = pick(next, ctx.sites);
    const session = await open(ctx, actor, { site, seed: Math.floor(next() * 2 ** 31) });
    if (session) await close(ctx, actor, session.id);
  }
};

const taskListing: Round = async (ctx, next, actor) => {
  const offset = Math.floor(next() * 2 ** 30);
  await ctx.ledger.call({
    actor,
    kind: "tasks",
    method: "GET",
    path: `/v1/tasks?split=test&offset=${offset}&limit=100`,
  });
};

const proposals: Round = async (ctx, next, actor) => {
  for (let i = 0; i < 5; i++) {
    const seed = Math.floor(next() * 2 ** 31);
    const proposal = next() < 0.7
      ? {
        site: "forum",
        seed,
        instruction: `How many members does forum ${i} have? ${"pad ".repeat(next() * 500)}`,
        read: {
          table: "subscriptions",
          where: { forum_id: 1 + Math.floor(next() * 5) },
          count: true,
        },
        op: "number",
      }
      : {
        site: "shop",
        seed,
        read: { table: pick(next, ["users", "x", "sqlite_master"]) },
        op: "regex",
      };
    await ctx.ledger.call({
      actor,
      kind: "proposal",
      method: "POST",
      path: "/v1/tasks/proposals",
      body: JSON.stringify(proposal),
    });
  }
};

const groups: Round = async (ctx, next, actor) => {
  const n = pick(next, [2, 3, 64]);
  const { status, body } = await ctx.ledger.call({
    actor,
    kind: "group",
    method: "POST",
    path: "/v1/groups",
    body: JSON.stringify({ task: "demo/add-note/2", n }),
  });
  if (status !== 200 && status !== 201) return;
  const ids = (body as { sessions: { id: string }[] }).sessions.map((s) => s.id);
  for (const id of ids) ctx.ledger.opened(id, actor);
  const steps = ids.map((id) => ({ session_id: id, action: randomAction(next, "http://x") }));
  const batch = await ctx.ledger.call({
    actor,
    kind: "batch",
    method: "POST",
    path: "/v1/batch/step",
    body: JSON.stringify({
      steps: [...steps, { session_id: "s-nope", action: { action: "reload" } }],
    }),
    step: true,
  });
  const results = (batch.body as { results?: { session_id: string; result?: unknown }[] })?.results;
  for (const item of results ?? []) {
    if (item.result && ids.includes(item.session_id)) {
      ctx.ledger.stepSeen(item.session_id, actor, item.result as Parameters<Ledger["stepSeen"]>[2]);
    }
  }
  for (const id of ids) await close(ctx, actor, id);
};

const wsFlood: Round = async (ctx, next, actor) => {
  if (ctx.stopping()) return;
  const start = Date.now();
  // Its steps are abandoned by the disconnect: not steps the server owes an answer.
  const record: Call = {
    actor,
    kind: "ws-flood",
    step: false,
    start,
    end: start,
    outcome: "abandoned",
  };
  ctx.ledger.calls.push(record);
  const ws = new WebSocket(`ws://127.0.0.1:${ctx.port}/ws`);
  let session: string | undefined;
  let answers = 0;
  const opened = Promise.withResolvers<void>();
  ws.onopen = () => ws.send(JSON.stringify({ type: "reset", data: { task: "demo/add-note/3" } }));
  ws.onerror = () => opened.resolve();
  ws.onclose = () => opened.resolve();
  ws.onmessage = (event) => {
    const message = JSON.parse(String(event.data)) as {
      type: string;
      data: {
        reward?: number | null;
        done?: boolean;
        observation?: { metadata?: Record<string, unknown> };
      };
    };
    const metadata = message.data.observation?.metadata ?? {};
    if (session === undefined) {
      if (typeof metadata["session_id"] === "string") {
        session = metadata["session_id"];
        ctx.ledger.opened(session, actor, true);
      }
      opened.resolve();
      return;
    }
    answers++;
    if (message.type === "observation") {
      ctx.ledger.stepSeen(session, actor, {
        status: String(metadata["status"]),
        reward: message.data.reward ?? 0,
        done: message.data.done ?? false,
        truncated: false,
        observation: null,
        info: { step: Number(metadata["step"]) },
      });
    }
  };
  await Promise.race([opened.promise, new Promise((r) => setTimeout(r, 60_000))]);
  if (session !== undefined && ws.readyState === WebSocket.OPEN) {
    const n = pick(next, [500, 2_000]);
    for (let i = 0; i < n; i++) {
      ws.send(JSON.stringify({ type: "step", data: randomAction(next, "http://x") }));
    }
    await new Promise((r) => setTimeout(r, 1_000 + next() * 3_000));
  }
  ws.close();
  record.end = Date.now();
  record.error = `session ${session}, ${answers} answers before the disconnect`;
};

const halfOpen: Round = async (ctx, next) => {
  if (ctx.halfOpen.held.size >= ctx.halfOpen.max || ctx.stopping()) return;
  let conn: Deno.Conn;
  try {
    conn = await Deno.connect({ hostname: "127.0.0.1", port: ctx.port });
  } catch {
    return;
  }
  ctx.halfOpen.held.add(conn);
  const partial = pick(next, [
    "",
    "POST /v1/sessions HTTP/1.1\r\nHost: x\r\n",
    "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n{",
    "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n",
  ]);
  if (partial) await conn.write(new TextEncoder().encode(partial)).catch(() => 0);
  // Held open in the background, never finished, then dropped.
  setTimeout(() => dropHalfOpen(ctx, conn), 10_000 + next() * 20_000);
};

/**
 * Closes a half-open connection (all of them without `conn`).
 *
 * @param ctx what the actors share
 * @param conn the connection
 */
export function dropHalfOpen(ctx: HostileContext, conn?: Deno.Conn): void {
  for (const held of conn ? [conn] : [...ctx.halfOpen.held]) {
    if (!ctx.halfOpen.held.delete(held)) continue;
    try {
      held.close();
    } catch {
      // Closed already.
    }
  }
}

/** The hostile rounds by name, with their weights. */
export const ROUNDS: Record<string, { weight: number; run: Round }> = {
  "random-actions": { weight: 4, run: randomActions },
  "long-answers": { weight: 2, run: longAnswers },
  "deep-json": { weight: 2, run: deepJson },
  "stale-ids": { weight: 2, run: staleIds },
  "seed-fanout": { weight: 1, run: seedFanout },
  "task-listing": { weight: 1, run: taskListing },
  proposals: { weight: 1, run: proposals },
  "groups-batch": { weight: 1, run: groups },
  "ws-flood": { weight: 0.3, run: wsFlood },
  "half-open": { weight: 2, run: halfOpen },
};

/**
 * One hostile actor: rounds drawn by weight until `until` (epoch ms).
 *
 * @param ctx what the actors share
 * @param seed the actor's seed
 * @param until when to stop
 */
export async function hostileActor(
  ctx: HostileContext,
  seed: number,
  until: number,
): Promise<void> {
  const next = random(seed);
  const entries = Object.entries(ROUNDS);
  const total = entries.reduce((sum, [, r]) => sum + r.weight, 0);
  while (Date.now() < until) {
    let r = next() * total;
    const [name, round] = entries.find(([, e]) => (r -= e.weight) < 0) ?? entries[0]!;
    ctx.rounds.set(name, (ctx.rounds.get(name) ?? 0) + 1);
    await round.run(ctx, next, `hostile:${name}`);
  }
}
