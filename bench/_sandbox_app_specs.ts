/**
 * What the real-application bench (`bench/_sandbox_apps.ts`) measures: the
 * applications, each with the write an anonymous visitor makes on it, and
 * the shape of a backend of envs.
 *
 * @module
 */
import type { Gateway } from "../sandboxes/gateway.ts";
import type { Instance, Sandbox } from "../sandboxes/types.ts";

/** A real application and the write a visitor makes on it. */
export interface AppSpec {
  key: string;
  label: string;
  image: string;
  database: string;
  /** How long an instance (and the base, when it has to seed) may take. */
  readyMs: number;
  /** Whether its image runs the shared-runtime mode (`WS_SHARED=1`), measured beside the containers. */
  sharedRuntime: boolean;
  /** One write through the gateway, as an anonymous visitor makes it; throws unless it took. */
  write(gateway: Gateway, env: Instance, n: number): Promise<void>;
}

/** A backend of envs (a container per env, or the shared runtime). */
export interface AppBackend {
  key: "incus-btrfs" | "docker" | "shared" | "shared-cold";
  label: string;
  open(gateway: Gateway, app: AppSpec): Promise<Sandbox>;
  /** Bytes the env holds of its own, after its first write. */
  storage(sandbox: Sandbox, env: Instance): Promise<number>;
  /** The host pid of the container's init. */
  initPid(sandbox: Sandbox, env: Instance): Promise<number>;
  /**
   * The container's memory use as the backend reports it (cgroup, page cache
   * included); for the shared runtime, the runtime's divided among `envs`.
   */
  cgroupMemory(sandbox: Sandbox, env: Instance, envs: number): Promise<number>;
  /**
   * PSS and RSS of the env's processes, when not every process of its
   * container's pid namespace (the shared runtime: the env's own server plus
   * its share of the runtime among `envs` envs).
   */
  memory?(
    sandbox: Sandbox,
    env: Instance,
    envs: number,
  ): Promise<{ pss: number; rss: number; processes: number; ownPss: number }>;
  /** PSS of everything the backend runs for `envs`, divided among them (the shared runtime). */
  pssPerEnv?(sandbox: Sandbox, envs: Instance[]): Promise<number>;
  /** Bytes free where the next env's storage goes. */
  free(sandbox: Sandbox): Promise<number>;
  /**
   * Waits, untimed, until a launch or reset finds what the backend's row
   * says it takes (the shared runtime's spares refilled); a bounded wait.
   */
  settle?(sandbox: Sandbox): Promise<void>;
}

async function expectStatus(response: Response, status: number, what: string): Promise<string> {
  const body = await response.text();
  if (response.status !== status) {
    throw new Error(`${what} answered ${response.status}: ${body.slice(0, 300)}`);
  }
  return body;
}

let wordpressPost: number | undefined;

/** The applications measured, in `BENCH_APPS` order of keys. */
export const APPS: AppSpec[] = [
  {
    key: "mediawiki",
    label: "MediaWiki 1.39",
    image: "webserv-mediawiki",
    database: "MariaDB, 1,511 MiB after the build",
    readyMs: 300_000,
    sharedRuntime: true,
    async write(gateway, env, n) {
      // An anonymous edit through the API, whose edit token for anonymous users is "+\".
      const response = await gateway.request(env.origin, "/api.php", {
        method: "POST",
        body: new URLSearchParams({
          action: "edit",
          format: "json",
          title: `Bench edit ${n}`,
          appendtext: `A sentence from the sandbox benchmark, ${crypto.randomUUID()}.`,
          summary: "sandbox benchmark",
          token: "+\\",
        }),
      });
      const body = await expectStatus(response, 200, "MediaWiki's edit");
      if (!body.includes('"result":"Success"')) {
        throw new Error(`MediaWiki did not take the edit: ${body.slice(0, 300)}`);
      }
    },
  },
  {
    key: "wordpress",
    label: "WordPress 6.1",
    image: "webserv-wordpress",
    database: "MariaDB, seeded posts, pages and comments",
    readyMs: 180_000,
    sharedRuntime: true,
    async write(gateway, env) {
      // The newest post's id is the same in every env of the seed: read once,
      // over the state channel, outside the timed write when it is warm.
      let post = wordpressPost;
      if (post === undefined) {
        const response = await env.state?.fetch("/query/posts?status=publish&limit=1");
        if (!response) throw new Error("the WordPress env has no state channel");
        const body = JSON.parse(await expectStatus(response, 200, "WordPress's state")) as {
          result: { id: number }[];
        };
        post = body.result[0]?.id;
        if (post === undefined) throw new Error("WordPress has no published post");
        wordpressPost = post;
      }
      const response = await gateway.request(env.origin, "/wp-comments-post.php", {
        method: "POST",
        body: new URLSearchParams({
          comment_post_ID: String(post),
          author: "Bench Reader",
          email: "reader@webserv.test",
          url: "",
          comment: `A comment from the sandbox benchmark ${crypto.randomUUID()}`,
        }),
      });
      await expectStatus(response, 302, "WordPress's comment form");
    },
  },
  {
    key: "redmine",
    label: "Redmine 5.0",
    image: "webserv-redmine",
    database: "MariaDB, 18 MiB after seed 1",
    readyMs: 300_000,
    // One Passenger/Rails for every env (fixtures/sites/redmine/shared_env.rb).
    sharedRuntime: true,
    write: redmineNote,
  },
];

/**
 * Redmine's write as a browser makes it: anonymous visitors may not write, so
 * the seed's administrator signs in through the login form and adds a note
 * to Redmine's issue 1 through its edit form, each POST with the page's CSRF token and
 * the session cookie. The write is checked by its redirect back to the issue
 * (a refused token answers 422, a rejected note renders the form with 200).
 */
async function redmineNote(gateway: Gateway, env: Instance, n: number): Promise<void> {
  const cookies = new Map<string, string>();
  const send = async (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (cookies.size) {
      headers.set("cookie", [...cookies].map(([name, value]) => `${name}=${value}`).join("; "));
    }
    const response = await gateway.request(env.origin, path, { ...init, headers });
    for (const cookie of response.headers.getSetCookie()) {
      const pair = cookie.split(";", 1)[0] ?? "";
      const at = pair.indexOf("=");
      if (at > 0) cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return response;
  };
  const csrf = (html: string, what: string) => {
    const token = html.match(/<meta name="csrf-token" content="([^"]+)"/)?.[1];
    if (!token) throw new Error(`${what} has no CSRF token`);
    return token;
  };
  const form = (fields: Record<string, string>) => ({
    method: "POST",
    body: new URLSearchParams(fields),
  });
  const login = await expectStatus(await send("/login"), 200, "Redmine's login page");
  const signedIn = await send(
    "/login",
    form({
      authenticity_token: csrf(login, "Redmine's login page"),
      username: "admin",
      password: "webserv-admin",
    }),
  );
  await expectStatus(signedIn, 302, "Redmine's login form");
  if ((signedIn.headers.get("location") ?? "").includes("/login")) {
    throw new Error("Redmine refused the administrator's login");
  }
  const issue = await expectStatus(await send("/issues/1"), 200, "Redmine's issue 1");
  const noted = await send(
    "/issues/1",
    form({
      _method: "patch",
      authenticity_token: csrf(issue, "Redmine's issue 1"),
      "issue[notes]": `A note from the sandbox benchmark, ${n}: ${crypto.randomUUID()}`,
    }),
  );
  await expectStatus(noted, 302, "Redmine's issue form");
  if (!/\/issues\/1(\?|#|$)/.test(noted.headers.get("location") ?? "")) {
    throw new Error(`Redmine sent the note elsewhere: ${noted.headers.get("location")}`);
  }
}
