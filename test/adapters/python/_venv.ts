// The Python test venv that .ci/python.sh installs: its interpreter, and
// pytest run in it against a server. Fails loudly (never skips) when the venv
// is missing, since CI's test command is the only thing that runs these.
import { assertEquals } from "@std/assert";

const HOME = Deno.env.get("HOME") ?? "/root";
/** The venv's directory. */
export const VENV = Deno.env.get("WEBSERV_VENV") ?? `${HOME}/.cache/webserv-venv`;
/** The second venv's directory: OpenEnv's current client (openenv 0.10), which cannot share the first. */
export const OPENENV_VENV = Deno.env.get("WEBSERV_OPENENV_VENV") ??
  `${HOME}/.cache/webserv-venv-openenv`;
/** The third venv's directory: Prime Intellect's verifiers, whose pins (mcp, openai) conflict with the first's. */
export const VERIFIERS_VENV = Deno.env.get("WEBSERV_VERIFIERS_VENV") ??
  `${HOME}/.cache/webserv-venv-verifiers`;
/** The fourth venv's directory: the RL frameworks webserv.integrations wraps (Agent Lightning, ART, rLLM's gateway). */
export const HARNESS_VENV = Deno.env.get("WEBSERV_HARNESS_VENV") ??
  `${HOME}/.cache/webserv-venv-harnesses`;
/** The fifth venv's directory: verl (with torch), whose agent-loop worker runs webserv.integrations.verl. */
export const VERL_VENV = Deno.env.get("WEBSERV_VERL_VENV") ?? `${HOME}/.cache/webserv-venv-verl`;
const HERE = new URL(".", import.meta.url).pathname;
const REPO = new URL("../../../", import.meta.url).pathname;

/**
 * The venv's Python.
 *
 * @param venv the venv
 * @returns its path
 * @throws {Error} when the venv is missing, saying how to make it
 */
export function venvPython(venv: string = VENV): string {
  const python = `${venv}/bin/python`;
  try {
    Deno.statSync(python);
  } catch {
    throw new Error(
      `No Python test venv at ${venv}: run "bash .ci/python.sh" (or set WEBSERV_VENV, WEBSERV_OPENENV_VENV, WEBSERV_VERIFIERS_VENV, WEBSERV_HARNESS_VENV, WEBSERV_VERL_VENV)`,
    );
  }
  return python;
}

/**
 * Runs pytest files of this directory in the venv; fails with pytest's output.
 *
 * @param files the test files, relative to this directory
 * @param env what the tests read (WEBSERV_URL, …)
 * @param args pytest's extra arguments
 * @param venv the venv to run in
 */
export async function pytest(
  files: string[],
  env: Record<string, string>,
  args: string[] = [],
  venv: string = VENV,
): Promise<string> {
  const output = await new Deno.Command(venvPython(venv), {
    args: ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", ...args, ...files],
    cwd: HERE,
    // The installed package (.ci/python.sh builds and installs the wheel),
    // not a source path; WEBSERV_REPO is where the Ray pool runs the server.
    env: { ...env, WEBSERV_REPO: REPO },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  assertEquals(output.code, 0, text);
  return text;
}
