/**
 * __TITLE__, a recreated site made by `deno task site:new __NAME__`: entries
 * with a title and a count, a list page, an entry page and an add form, its
 * state in SQLite. Three templates (information, navigation, state) with
 * their solvers. Grow it: add tables to `TRACKED`, routes to the app and to
 * `view`, templates with solvers; `deno task site:check __NAME__ --seeds 3`
 * is the gate.
 *
 * @module
 */
import { Hono } from "hono";
import type { DatabaseSync } from "node:sqlite";
import { count, drawFor, pickRow } from "../kit/pick.ts";
import { find, look } from "../kit/solve.ts";
import { stateApp } from "../kit/state_app.ts";
import { taskId } from "../kit/task.ts";
import type { SiteModule, Task, TaskTemplate, TrackedState } from "../kit/types.ts";
import { numericId, routeViews } from "../kit/views.ts";

const NAME = "__NAME__";
const WORDS = ["amber", "birch", "cedar", "delta", "ember", "fjord", "grove", "harbor", "iris"];
const KINDS = ["guide", "note", "recipe", "story", "manual", "report", "letter", "poem"];

/** What the state app hashes and diffs. */
const TRACKED: TrackedState = { tables: { entries: ["id"] } };

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${
    escape(title)
  } — __TITLE__</title></head><body><nav><a href="/">All entries</a></nav><main>${body}</main></body></html>`;
}

function entries(db: DatabaseSync): { id: number; title: string; views: number }[] {
  return db.prepare("SELECT id, title, views FROM entries ORDER BY id").all().map((row) => ({
    id: Number(row["id"]),
    title: String(row["title"]),
    views: Number(row["views"]),
  }));
}

function task(template: string, seed: number, fields: Omit<Task, "id" | "site" | "template" | "seed" | "startUrl">): Task {
  return { id: taskId(NAME, template, seed), site: NAME, template, seed, startUrl: "/", ...fields };
}

function quoted(instruction: string): string {
  return /“(.+?)”/.exec(instruction)?.[1] ?? "";
}

const ENTRY_SQL = "SELECT id, title, views FROM entries ORDER BY id";

/** Information: read an entry's count on its page (counts are drawn over a wide range). */
const entryViews: TaskTemplate = {
  id: "entry-views",
  kind: "information",
  difficulty: "easy",
  generate(db, seed) {
    const entry = pickRow(db, drawFor(this.id, seed), ENTRY_SQL);
    return task(this.id, seed, {
      instruction: `How many views does the entry “${entry["title"]}” have? Answer with a number.`,
      evaluator: { kind: "answer", op: "number", expected: Number(entry["views"]) },
      difficulty: "easy",
    });
  },
  distinct: (db) => count(db, "SELECT COUNT(*) AS n FROM entries"),
  async solve(env, t) {
    await env.step({ action: "click", id: find(await look(env), "link", quoted(t.instruction)).id });
    const text = (await look(env)).text;
    const views = /Views: (\d+)/.exec(text)?.[1];
    if (!views) throw new Error(`No views in:\n${text}`);
    await env.step({ action: "stop", answer: views });
  },
};

/** Navigation: open an entry's page. */
const openEntry: TaskTemplate = {
  id: "open-entry",
  kind: "navigation",
  difficulty: "easy",
  generate(db, seed) {
    const entry = pickRow(db, drawFor(this.id, seed), ENTRY_SQL);
    return task(this.id, seed, {
      instruction: `Open the page of the entry “${entry["title"]}”.`,
      evaluator: { kind: "url", path: `/entries/${entry["id"]}` },
      difficulty: "easy",
    });
  },
  distinct: (db) => count(db, "SELECT COUNT(*) AS n FROM entries"),
  async solve(env, t) {
    await env.step({ action: "click", id: find(await look(env), "link", quoted(t.instruction)).id });
    await env.step({ action: "stop", answer: "done" });
  },
};

/** State: add an entry with a given title. */
const addEntry: TaskTemplate = {
  id: "add-entry",
  kind: "state",
  difficulty: "easy",
  generate(_db, seed) {
    const draw = drawFor(this.id, seed);
    const title = `${WORDS[draw(WORDS.length)]} ${KINDS[draw(KINDS.length)]} ${100 + draw(900)}`;
    return task(this.id, seed, {
      instruction: `Add an entry titled “${title}”.`,
      evaluator: {
        kind: "state",
        expect: [{ table: "entries", change: "added", where: { title }, label: `the entry “${title}”` }],
      },
      difficulty: "easy",
    });
  },
  distinct: () => WORDS.length * KINDS.length * 900,
  async solve(env, t) {
    const o = await look(env);
    await env.step({ action: "type", id: find(o, "textbox", "New entry").id, text: quoted(t.instruction) });
    await env.step({ action: "click", id: find(o, "button", "Add").id });
    await env.step({ action: "stop", answer: "done" });
  },
};

/** The site. */
const site: SiteModule = {
  name: NAME,
  title: "__TITLE__",
  tracked: TRACKED,
  // Nothing the app writes by itself: every tracked change is a user's act.
  harmless: [],
  templates: [entryViews, openEntry, addEntry],
  // The page a URL task names: an entry by its id as `Number()` reads it.
  view: routeViews([{ pattern: "/entries/:id", params: { id: numericId } }]),
  seed(db, seed) {
    db.exec(
      "CREATE TABLE entries (id INTEGER PRIMARY KEY, title TEXT NOT NULL UNIQUE, views INTEGER NOT NULL)",
    );
    const draw = drawFor(`${NAME}/seed`, seed);
    const insert = db.prepare("INSERT OR IGNORE INTO entries (title, views) VALUES (?, ?)");
    // A title holds a drawn number, never the row's id: a URL task's target must be found
    // on the page, not built from the instruction's words (`kit/word_guess.ts`).
    for (let i = 0; i < 40; i++) {
      insert.run(
        `${WORDS[draw(WORDS.length)]} ${KINDS[draw(KINDS.length)]} ${100 + draw(900)}`,
        draw(5000),
      );
    }
  },
  app(db) {
    const app = new Hono();
    app.get("/", (c) => {
      const items = entries(db).map((e) => `<li><a href="/entries/${e.id}">${escape(e.title)}</a></li>`)
        .join("");
      return c.html(page(
        "All entries",
        `<h1>Entries</h1><ul>${items}</ul>
        <form method="post" action="/entries"><label>New entry <input name="title"></label>
        <button type="submit">Add</button></form>`,
      ));
    });
    app.get("/entries/:id", (c) => {
      const entry = entries(db).find((e) => e.id === Number(c.req.param("id")));
      if (!entry) return c.html(page("Not found", "<h1>No such entry</h1>"), 404);
      return c.html(page(entry.title, `<h1>${escape(entry.title)}</h1><p>Views: ${entry.views}</p>`));
    });
    app.post("/entries", async (c) => {
      const title = (await c.req.parseBody())["title"];
      if (typeof title === "string" && title.trim() !== "") {
        db.prepare("INSERT OR IGNORE INTO entries (title, views) VALUES (?, 0)").run(title.trim());
      }
      return c.redirect("/", 303);
    });
    return (request) => app.fetch(request);
  },
  state(db) {
    return stateApp(db, TRACKED);
  },
};
export default site;
