/**
 * The privileged state API of a WordPress container, over its own MariaDB:
 * the same routes and shapes as the kit's `stateApp` (`GET /healthz`,
 * `GET /hash`, `POST /mark`, `GET /diff`, `GET /tables/:name`,
 * `GET /query/:name`), served on `/run/ws/state.sock`, which the host
 * bind-mounts and the gateway never routes to.
 *
 * Runs inside the container (bundled by `deno task image:apps`), as root, so
 * it reaches MariaDB through the `mariadb` client over the unix socket with
 * the root account's socket authentication: no password, no network.
 *
 * Hash and diff follow the kit's invariants: rows ordered by primary key,
 * each serialised by MariaDB as a JSON array of its columns in name order,
 * ignored columns left out of the compared serialisation.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type {
  Json,
  Row,
  RowChange,
  StateDiff,
  StateHash,
  TableDiff,
} from "../../../../fixtures/sites/kit/types.ts";

/** The header every state API response carries, as the kit's. */
const STATE_HEADER = "x-webserv-state";
const DATABASE = "wordpress";

/** The tables hashed and diffed, with their primary keys. */
export const TRACKED: Record<string, string[]> = {
  wp_commentmeta: ["meta_id"],
  wp_comments: ["comment_ID"],
  wp_postmeta: ["meta_id"],
  wp_posts: ["ID"],
  wp_term_relationships: ["object_id", "term_taxonomy_id"],
  wp_term_taxonomy: ["term_taxonomy_id"],
  wp_termmeta: ["meta_id"],
  wp_terms: ["term_id"],
  wp_usermeta: ["umeta_id"],
  wp_users: ["ID"],
};

/**
 * Columns left out of the hash and of "changed": salted password hashes
 * differ between two seedings of the same seed. (`wp_options` is not
 * tracked at all: it holds the install time, cron times and transients.)
 */
export const IGNORED = new Set(["wp_users.user_pass"]);

class BadRequest extends Error {}

/** Runs one SQL statement with the `mariadb` client; one output line per row. */
async function sql(statement: string): Promise<string[]> {
  const { code, stdout, stderr } = await new Deno.Command("mariadb", {
    args: ["--batch", "--skip-column-names", "--raw", `--database=${DATABASE}`, "-e", statement],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (code !== 0) {
    throw new Error(`MariaDB refused the query: ${new TextDecoder().decode(stderr).trim()}`);
  }
  const text = new TextDecoder().decode(stdout);
  return text === "" ? [] : text.replace(/\n$/, "").split("\n");
}

function quote(identifier: string): string {
  return `\`${identifier.replaceAll("`", "``")}\``;
}

/**
 * `expression = value`, compared byte for byte as SQLite's `=` compares text
 * (a column's collation would fold case and may not mix with the literal's);
 * the value travels as a hex literal, which no input can break out of.
 */
function equals(expression: string, value: string): string {
  const hex = Array.from(new TextEncoder().encode(value), (b) => b.toString(16).padStart(2, "0"))
    .join("");
  return `CAST(${expression} AS BINARY) = X'${hex}'`;
}

async function columnsOf(table: string): Promise<string[]> {
  return (await sql(
    `SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '${DATABASE}' AND ${
      equals("TABLE_NAME", table)
    } ORDER BY COLUMN_NAME`,
  ));
}

interface TableInfo {
  name: string;
  key: string[];
  columns: string[];
  compared: string[];
  /** Selects `k`, `a` and `c` (or NULL when every column is compared), tab-separated. */
  select: string;
}

async function describe(): Promise<TableInfo[]> {
  const tables: TableInfo[] = [];
  for (const [name, key] of Object.entries(TRACKED).sort(([a], [b]) => a < b ? -1 : 1)) {
    // information_schema's order is not byte order for mixed case (comment_ID).
    const columns = (await columnsOf(name)).sort();
    if (columns.length === 0) throw new Error(`Cannot track table "${name}": it does not exist`);
    const compared = columns.filter((column) => !IGNORED.has(`${name}.${column}`));
    const array = (list: string[]) => `JSON_ARRAY(${list.map(quote).join(", ")})`;
    tables.push({
      name,
      key,
      columns,
      compared,
      select: `SELECT ${array(key)}, ${array(columns)}, ${
        compared.length === columns.length ? "NULL" : array(compared)
      } FROM ${quote(name)} ORDER BY ${key.map(quote).join(", ")}`,
    });
  }
  return tables;
}

interface Serialised {
  k: string;
  a: string;
  c: string;
}

async function rows(table: TableInfo): Promise<Serialised[]> {
  // JSON escapes tabs and newlines, so a tab separates the three arrays.
  return (await sql(table.select)).map((line) => {
    const [k = "", a = "", c = "NULL"] = line.split("\t");
    return { k, a, c: c === "NULL" ? a : c };
  });
}

function rowOf(table: TableInfo, all: string): Row {
  const values = JSON.parse(all) as Json[];
  const row: Row = {};
  table.columns.forEach((column, i) => row[column] = values[i] ?? null);
  return row;
}

async function hashTables(tables: TableInfo[]): Promise<StateHash> {
  const whole = createHash("sha256");
  const result: StateHash = { hash: "", tables: {} };
  for (const table of tables) {
    const hash = createHash("sha256");
    hash.update(JSON.stringify(table.compared));
    const all = await rows(table);
    for (const row of all) {
      hash.update("\n");
      hash.update(row.c);
    }
    const digest = hash.digest("hex");
    result.tables[table.name] = { rows: all.length, hash: digest };
    whole.update(`${table.name}:${digest}\n`);
  }
  result.hash = whole.digest("hex");
  return result;
}

type Marked = Map<string, Map<string, [all: string, compared: string]>>;

async function diffTable(
  table: TableInfo,
  marked: Map<string, [string, string]>,
): Promise<TableDiff> {
  const diff: TableDiff = { added: [], removed: [], changed: [] };
  const seen = new Set<string>();
  for (const current of await rows(table)) {
    seen.add(current.k);
    const before = marked.get(current.k);
    if (!before) {
      diff.added.push(rowOf(table, current.a));
    } else if (before[1] !== current.c) {
      const was = rowOf(table, before[0]);
      const now = rowOf(table, current.a);
      const change: RowChange = {
        key: Object.fromEntries(table.key.map((column) => [column, now[column] ?? null])),
        before: was,
        after: now,
        columns: table.compared.filter((column) =>
          JSON.stringify(was[column] ?? null) !== JSON.stringify(now[column] ?? null)
        ),
      };
      diff.changed.push(change);
    }
  }
  for (const [key, [all]] of marked) {
    if (!seen.has(key)) diff.removed.push(rowOf(table, all));
  }
  return diff;
}

/** A post as `GET /query/posts` reports it. */
export interface PostSummary {
  /** `wp_posts.ID`. */
  id: number;
  /** The title as stored. */
  title: string;
  /** `publish`, `draft`, `trash`… */
  status: string;
  /** `post` or `page` (or another post type). */
  type: string;
  /** The author's `user_login`. */
  author: string;
  /** `post_date`, local time, `YYYY-MM-DD hh:mm:ss`. */
  date: string;
  /** `comment_count`: the approved comments. */
  comments: number;
  /** The category names, sorted. */
  categories: string[];
}

/** The named reads: typed views over WordPress's tables. */
const QUERIES: Record<string, (params: URLSearchParams) => Promise<unknown>> = {
  /** Posts (or `type=page`), newest first; `status`, `type`, `limit` filter. */
  async posts(params) {
    const type = params.get("type") ?? "post";
    const status = params.get("status");
    const limit = Number(params.get("limit") ?? "1000");
    if (!Number.isInteger(limit) || limit < 1) {
      throw new BadRequest(`limit "${params.get("limit")}" is not a positive integer`);
    }
    const lines = await sql(
      `SELECT JSON_OBJECT('id', p.ID, 'title', p.post_title, 'status', p.post_status,
        'type', p.post_type, 'author', u.user_login, 'date', p.post_date,
        'comments', p.comment_count,
        'categories', (SELECT JSON_ARRAYAGG(t.name) FROM wp_term_relationships r
          JOIN wp_term_taxonomy x ON x.term_taxonomy_id = r.term_taxonomy_id AND x.taxonomy = 'category'
          JOIN wp_terms t ON t.term_id = x.term_id WHERE r.object_id = p.ID))
      FROM wp_posts p LEFT JOIN wp_users u ON u.ID = p.post_author
      WHERE ${equals("p.post_type", type)}${status ? ` AND ${equals("p.post_status", status)}` : ""}
      ORDER BY p.post_date DESC, p.ID DESC LIMIT ${limit}`,
    );
    return lines.map((line) => {
      const post = JSON.parse(line) as Omit<PostSummary, "categories"> & {
        categories: string[] | null;
      };
      return { ...post, categories: (post.categories ?? []).sort() } satisfies PostSummary;
    });
  },
};

async function handle(request: Request, state: { tables?: TableInfo[]; mark?: Marked }) {
  const url = new URL(request.url);
  const route = `${request.method} ${url.pathname}`;
  if (route === "GET /healthz") {
    await sql("SELECT 1");
    return new Response("ok");
  }
  state.tables ??= await describe();
  const tables = state.tables;
  if (route === "GET /hash") return Response.json(await hashTables(tables));
  if (route === "POST /mark") {
    const mark: Marked = new Map();
    for (const table of tables) {
      mark.set(table.name, new Map((await rows(table)).map((row) => [row.k, [row.a, row.c]])));
    }
    state.mark = mark;
    return Response.json({
      marked: Object.fromEntries([...mark].map(([name, marked]) => [name, marked.size])),
    });
  }
  if (route === "GET /diff") {
    if (!state.mark) {
      return Response.json({ error: "No mark to diff against: POST /mark first" }, { status: 409 });
    }
    const diff: StateDiff = { tables: {} };
    for (const table of tables) {
      const changes = await diffTable(table, state.mark.get(table.name) ?? new Map());
      if (changes.added.length + changes.removed.length + changes.changed.length > 0) {
        diff.tables[table.name] = changes;
      }
    }
    return Response.json(diff);
  }
  const tableRoute = /^GET \/tables\/([A-Za-z0-9_]+)$/.exec(route);
  if (tableRoute?.[1]) return Response.json(await readTable(tableRoute[1], url.searchParams));
  const queryRoute = /^GET \/query\/([A-Za-z0-9_-]+)$/.exec(route);
  if (queryRoute?.[1]) {
    const query = Object.hasOwn(QUERIES, queryRoute[1]) ? QUERIES[queryRoute[1]] : undefined;
    if (!query) return Response.json({ error: `No query "${queryRoute[1]}"` }, { status: 404 });
    return Response.json({ result: await query(url.searchParams) ?? null });
  }
  return Response.json({ error: `No state route "${route}"` }, { status: 404 });
}

async function readTable(name: string, params: URLSearchParams): Promise<Row[]> {
  const columns = await columnsOf(name);
  if (columns.length === 0) throw new NotFound(`No table "${name}"`);
  const where: string[] = [];
  let limit = 1000;
  for (const [column, value] of params) {
    if (column === "limit") {
      limit = Number(value);
      if (!Number.isInteger(limit) || limit < 1) {
        throw new BadRequest(`Cannot read "${name}": limit "${value}" is not a positive integer`);
      }
      continue;
    }
    if (!columns.includes(column)) {
      throw new BadRequest(`Cannot read "${name}": it has no column "${column}"`);
    }
    where.push(equals(quote(column), value));
  }
  const table: TableInfo = {
    name,
    key: [],
    columns,
    compared: columns,
    select: "",
  };
  const lines = await sql(
    `SELECT JSON_ARRAY(${columns.map(quote).join(", ")}) FROM ${quote(name)}${
      where.length ? ` WHERE ${where.join(" AND ")}` : ""
    } LIMIT ${limit}`,
  );
  return lines.map((line) => rowOf(table, line));
}

class NotFound extends Error {}

if (import.meta.main) {
  const path = Deno.env.get("WS_STATE_SOCKET") ?? "/run/ws/state.sock";
  const state: { tables?: TableInfo[]; mark?: Marked } = {};
  // A socket left by a killed server would refuse the bind.
  try {
    Deno.removeSync(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  Deno.serve({ path, onListen() {} }, async (request) => {
    let response: Response;
    try {
      response = await handle(request, state);
    } catch (error) {
      const status = error instanceof BadRequest ? 400 : error instanceof NotFound ? 404 : 500;
      response = Response.json({ error: String((error as Error).message ?? error) }, { status });
    }
    response.headers.set(STATE_HEADER, "1");
    return response;
  });
  // The host connects as root from outside the container's user namespace.
  Deno.chmodSync(path, 0o777);
}
