/**
 * Redmine in the shared-runtime mode (`SharedRuntimeSandbox`): one
 * Passenger/Rails runtime for every env, a `mariadbd` per env on a reflinked
 * copy of the seeded datadir, picked per request by a Rack middleware
 * (`fixtures/sites/redmine/shared_env.rb`). With both envs served by one and
 * the same Rails process: a note through one env's origin (even one naming
 * the other env in the header the runtime picks databases by) is a journal
 * in that env's database only; an attachment uploaded through one env is a
 * file in that env's copy of the attachments only, and goes at its reset; a setting changed in one env is not shown by
 * the other, whose `Setting` cache that process had filled before; reset
 * restores the seeded hash and forgets the env's cached setting; a cold
 * reset and a cold creation are seeded too.
 *
 * Fails, never skips, when the image is missing: build it with
 * `deno task image:apps redmine` (or a private alias, named by
 * `WEBSERV_REDMINE_IMAGE`).
 */
import { assert, assertEquals, assertNotEquals, assertStringIncludes } from "@std/assert";
import { Gateway } from "../../sandboxes/gateway.ts";
import type {
  SharedRuntimeInstance,
  SharedRuntimeSandbox,
} from "../../sandboxes/incus/shared_runtime_sandbox.ts";
import type { StateHash } from "../../fixtures/sites/kit/types.ts";
import {
  addedRowsWith,
  assertColdCreateAndDestroy,
  execIn,
  markedPair,
  openShared,
} from "./_shared.ts";

/** The seed's administrator, for the REST API (`seed.rb` turns it on). */
const ADMIN = { authorization: `Basic ${btoa("admin:webserv-admin")}` };

/** Files under a folder of the runtime container holding a text. */
async function filesWith(env: SharedRuntimeInstance, folder: string, text: string) {
  // grep exits 1 when nothing matches; the trailing slash follows a link.
  const found = await execIn(env, "sh", "-c", `grep -rl '${text}' '${folder}/' || true`);
  return found.split("\n").filter((line) => line !== "");
}

/** The seed's title (`seed.rb`). */
const SEEDED_TITLE = "WebServ Redmine";

/** A browser's session on one env's origin: cookies, CSRF tokens, redirects not followed. */
class Session {
  #cookies = new Map<string, string>();
  constructor(readonly gateway: Gateway, readonly env: SharedRuntimeInstance) {}

  async send(
    path: string,
    init: RequestInit = {},
  ): Promise<{ status: number; body: string; location: string }> {
    const headers = new Headers(init.headers);
    if (this.#cookies.size) {
      headers.set("cookie", [...this.#cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    }
    const response = await this.gateway.request(this.env.origin, path, { ...init, headers });
    for (const cookie of response.headers.getSetCookie()) {
      const pair = cookie.split(";", 1)[0] ?? "";
      const at = pair.indexOf("=");
      if (at > 0) this.#cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return {
      status: response.status,
      body: await response.text(),
      location: response.headers.get("location") ?? "",
    };
  }

  /** GETs a page, expecting 200, and returns its CSRF token and body. */
  async page(path: string): Promise<{ token: string; body: string }> {
    const { status, body } = await this.send(path);
    assertEquals(status, 200, `${path}: ${body.slice(0, 300)}`);
    const token = body.match(/<meta name="csrf-token" content="([^"]+)"/)?.[1];
    assert(token, `${path} has no CSRF token`);
    return { token, body };
  }

  /** POSTs a form, expecting a redirect; returns where to. */
  async post(
    path: string,
    fields: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<string> {
    const { status, body, location } = await this.send(path, {
      method: "POST",
      headers,
      body: new URLSearchParams(fields),
    });
    assertEquals(status, 302, `POST ${path}: ${body.slice(0, 300)}`);
    return location;
  }

  /** Signs the seed's administrator in through the login form. */
  async signIn(): Promise<void> {
    const { token } = await this.page("/login");
    const to = await this.post("/login", {
      authenticity_token: token,
      username: "admin",
      password: "webserv-admin",
    });
    assert(!to.includes("/login"), "Redmine refused the administrator's login");
  }

  /** Adds a note to issue 1 through its edit form. */
  async note(text: string, headers: Record<string, string> = {}): Promise<void> {
    const { token } = await this.page("/issues/1");
    const to = await this.post("/issues/1", {
      _method: "patch",
      authenticity_token: token,
      "issue[notes]": text,
    }, headers);
    assert(/\/issues\/1(\?|#|$)/.test(to), `the note went elsewhere: ${to}`);
  }

  /** Sets the application's title through the administration's settings form. */
  async setTitle(title: string): Promise<void> {
    const { token } = await this.page("/settings?tab=general");
    await this.post("/settings/edit?tab=general", {
      authenticity_token: token,
      "settings[app_title]": title,
    });
  }

  /**
   * Uploads a file through the REST API as the administrator (an attachment
   * of no container yet, as a form's upload makes before it is saved).
   *
   * @returns the attachment's id
   */
  async upload(name: string, text: string): Promise<number> {
    const { status, body } = await this.send(`/uploads.json?filename=${name}`, {
      method: "POST",
      headers: { ...ADMIN, "content-type": "application/octet-stream" },
      body: text,
    });
    assertEquals(status, 201, `the upload was refused: ${body.slice(0, 300)}`);
    const id = (JSON.parse(body) as { upload?: { id?: number } }).upload?.id;
    assert(typeof id === "number", body);
    return id;
  }

  /** Downloads an attachment as the administrator: its status and text. */
  async download(id: number, name: string): Promise<{ status: number; body: string }> {
    return await this.send(`/attachments/download/${id}/${name}`, { headers: ADMIN });
  }

  /** The page title of the home page, which ends with the application's title. */
  async title(): Promise<string> {
    const { status, body } = await this.send("/");
    assertEquals(status, 200, body.slice(0, 300));
    return body.match(/<title>([^<]*)<\/title>/)?.[1] ?? "";
  }
}

function journalsWith(env: SharedRuntimeInstance, text: string): Promise<number> {
  return addedRowsWith(env, "journals", "notes", text);
}

/** The pids of the Rails application processes Passenger runs in the runtime container. */
async function railsProcesses(sandbox: SharedRuntimeSandbox, runtime: string): Promise<number[]> {
  const init = (await sandbox.client.instanceState(runtime)).pid;
  const namespace = await Deno.readLink(`/proc/${init}/ns/pid`);
  const pids: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      if (await Deno.readLink(`/proc/${entry.name}/ns/pid`) !== namespace) continue;
      const line = await Deno.readTextFile(`/proc/${entry.name}/cmdline`);
      if (line.startsWith("Passenger RubyApp")) pids.push(Number(entry.name));
    } catch {
      // The process ended meanwhile.
    }
  }
  return pids;
}

Deno.test("SharedRuntimeSandbox keeps each Redmine env's database and cached settings private in one Rails process, and resets it to the seeded hash", async () => {
  await using gateway = new Gateway();
  // Another checkout's build replaces "webserv-redmine" (its own inputs):
  // a private alias (`deno task image:apps --alias=NAME redmine`) keeps this one's.
  await using sandbox = await openShared(
    gateway,
    Deno.env.get("WEBSERV_REDMINE_IMAGE") ?? "webserv-redmine",
    { readyTimeoutMs: 900_000, envTimeoutMs: 120_000 },
  );
  const { a, b, stateA, stateB, seeded } = await markedPair(sandbox, 1);
  assertEquals(a.runtimeName, b.runtimeName, "the two envs do not share one runtime");
  const sessionA = new Session(gateway, a);
  const sessionB = new Session(gateway, b);

  // B's process fills its Setting cache first.
  assertStringIncludes(await sessionB.title(), SEEDED_TITLE);
  const rails = await railsProcesses(sandbox, a.runtimeName);
  assertEquals(rails.length, 1, `Passenger runs ${rails.length} Rails processes`);

  await sessionA.signIn();
  await sessionB.signIn();
  const forged = `A naming B ${crypto.randomUUID()}`;
  await sessionA.note(forged, { "x-webserv-env": b.key });
  const plain = `B ${crypto.randomUUID()}`;
  await sessionB.note(plain);
  assertEquals(await journalsWith(a, forged), 1, "the forged header moved A's note elsewhere");
  assertEquals(await journalsWith(b, forged), 0, "A's note reached B's database");
  assertEquals(await journalsWith(b, plain), 1);
  assertEquals(await journalsWith(a, plain), 0, "B's note reached A's database");

  // A setting changed in A: A shows it, B (its cache filled by this same
  // process before) does not.
  const title = `Title of A ${crypto.randomUUID().slice(0, 8)}`;
  await sessionA.setTitle(title);
  assertStringIncludes(await sessionA.title(), title);
  const titleB = await sessionB.title();
  assert(!titleB.includes(title), `B shows A's title: ${titleB}`);
  assertStringIncludes(titleB, SEEDED_TITLE);
  assertEquals(
    await railsProcesses(sandbox, a.runtimeName),
    rails,
    "another Rails process served some of these requests",
  );
  assertNotEquals((await stateA<StateHash>("/hash")).hash, seeded.hash);

  // An attachment uploaded through A is a file in A's own copy of the
  // attachments (neither B's nor the runtime's files/), and B cannot fetch it.
  const content = `attachment of A ${crypto.randomUUID()}`;
  const attachment = await sessionA.upload("probe.txt", content);
  const downloaded = await sessionA.download(attachment, "probe.txt");
  assertEquals(downloaded.status, 200, downloaded.body.slice(0, 300));
  assertEquals(downloaded.body, content);
  assertEquals((await filesWith(a, `/run/wsfiles/env-${a.key}`, content)).length, 1);
  assertEquals(await filesWith(b, `/run/wsfiles/env-${b.key}`, content), []);
  assertEquals(await filesWith(a, "/var/lib/redmine/default/files", content), []);
  assertEquals((await sessionB.download(attachment, "probe.txt")).status, 404);

  // Reset: the seeded hash, and the seeded title (no cached setting survives).
  await a.reset();
  assertEquals((await stateA<StateHash>("/hash")).hash, seeded.hash, "reset did not restore");
  assertEquals(await filesWith(a, `/run/wsfiles/env-${a.key}`, content), [], "A's file outlived");
  assertStringIncludes(await new Session(gateway, a).title(), SEEDED_TITLE);
  assert(!(await new Session(gateway, a).title()).includes(title), "A kept its title");
  const afterReset = new Session(gateway, a);
  await afterReset.signIn();
  await afterReset.note(`after reset ${crypto.randomUUID()}`);
  await b.reset({ cold: true });
  assertEquals(b.source, "cold");
  assertEquals((await stateB<StateHash>("/hash")).hash, seeded.hash, "a cold reset differs");

  await assertColdCreateAndDestroy(sandbox, gateway, 1, seeded, a, b);
});
