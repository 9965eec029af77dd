/**
 * Helpers for tests of a hostile container: a fake server on a host socket
 * (what a foothold would point the host at), and commands run inside a
 * container through its daemon's CLI (`incus exec`, `docker exec`).
 *
 * @module
 */
import { assert, assertEquals, assertNotEquals } from "@std/assert";

/** A server on a host unix socket that counts what reaches it. */
export interface FakeServer extends AsyncDisposable {
  /** Its socket. */
  path: string;
  /** Requests it answered. */
  readonly hits: number;
}

/**
 * Serves `body` as JSON on a fresh host socket: a stand-in for the host's
 * daemons or a fake state server that says the task was done.
 *
 * @param body what every request is answered with
 * @returns the server
 */
export async function fakeServer(body: unknown): Promise<FakeServer> {
  const folder = await Deno.makeTempDir({ prefix: "webserv-fake-" });
  const path = `${folder}/fake.sock`;
  let hits = 0;
  const server = Deno.serve({ path, onListen() {} }, () => {
    hits++;
    return Response.json(body);
  });
  return {
    path,
    get hits() {
      return hits;
    },
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      await Deno.remove(folder, { recursive: true });
    },
  };
}

/** What a command inside a container did. */
export interface Ran {
  code: number;
  output: string;
}

/**
 * Runs a command with a bound of 60 s.
 *
 * @param command the program
 * @param args its arguments
 * @returns its exit code and its stdout and stderr together
 */
export async function run(command: string, args: string[]): Promise<Ran> {
  const { code, stdout, stderr } = await new Deno.Command(command, {
    args,
    stdin: "null",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const text = new TextDecoder();
  return { code, output: text.decode(stdout) + text.decode(stderr) };
}

/** Runs a command inside a container, as root or as `user` (its uid and gid). */
export type ContainerExec = (name: string, args: string[], user?: number) => Promise<Ran>;

/** The environment a command inside a container gets: a home and a Deno cache it may write. */
const EXEC_ENV = ["--env", "HOME=/tmp", "--env", "DENO_DIR=/tmp/deno"];

/**
 * Runs a command inside an Incus container (`incus exec`), as root or as `user`.
 *
 * @param name the container
 * @param args the command and its arguments
 * @param user a uid (and gid) to run as
 * @returns its exit code and output
 */
export function incusExec(name: string, args: string[], user?: number): Promise<Ran> {
  const as = user === undefined ? [] : ["--user", String(user), "--group", String(user)];
  return run("incus", ["exec", name, ...as, ...EXEC_ENV, "--", ...args]);
}

/**
 * Runs a command inside a Docker container (`docker exec`), as root or as `user`.
 *
 * @param name the container
 * @param args the command and its arguments
 * @param user a uid (and gid) to run as
 * @returns its exit code and output
 */
export function dockerExec(name: string, args: string[], user?: number): Promise<Ran> {
  const as = user === undefined ? [] : ["--user", `${user}:${user}`];
  return run("docker", ["exec", ...as, ...EXEC_ENV, name, ...args]);
}

/**
 * Asserts that a process of another uid (33, www-data in the real
 * applications' images) cannot write the container's socket folder, and that
 * the refusal is for want of permission, not any other failure.
 *
 * @param exec how a command runs in the container
 * @param name the container
 */
export async function assertSocketFolderShut(exec: ContainerExec, name: string): Promise<void> {
  const planted = await exec(name, ["/bin/sh", "-c", "echo x > /run/ws/planted && echo WROTE"], 33);
  assertEquals(planted.output.includes("WROTE"), false, planted.output);
  assertNotEquals(planted.code, 0, planted.output);
  assert(/denied/i.test(planted.output), planted.output);
}

/**
 * The script, for `deno eval` inside a demo container, that replaces
 * `/run/ws/NAME` with a symlink to `target` (a host path: the host resolves it).
 *
 * @param name `state.sock` or `site.sock`
 * @param target where the link points
 * @returns the script
 */
export function plantLink(name: string, target: string): string {
  return `try { Deno.removeSync("/run/ws/${name}"); } catch { /* absent */ }
Deno.symlinkSync(${JSON.stringify(target)}, "/run/ws/${name}");`;
}
