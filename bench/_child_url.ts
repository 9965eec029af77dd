/**
 * Starts a child process that prints the URL it serves on, and waits for
 * that line: the rollout server (`serve.ts`) and the scripted model server
 * of `deno task bench:rollouts` both announce themselves so.
 *
 * @module
 */

/**
 * Spawns `command`, reads its stdout until `pattern` matches (killing it
 * past `timeoutMs`), then keeps draining its output so it never blocks on a
 * full pipe.
 *
 * @param command the command, its stdout piped
 * @param pattern what the announcing line matches; its first group is the URL
 * @param what the child's name, for the error
 * @param timeoutMs how long it may take to announce itself
 * @returns the URL and the child
 * @throws {Error} when the child ends or is killed before it prints a match
 */
export async function spawnForUrl(
  command: Deno.Command,
  pattern: RegExp,
  what: string,
  timeoutMs: number,
): Promise<{ url: string; child: Deno.ChildProcess }> {
  const child = command.spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  const deadline = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  let url: string | undefined;
  while (!url) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += value;
    url = seen.match(pattern)?.[1];
  }
  clearTimeout(deadline);
  if (!url) {
    child.kill("SIGKILL");
    await child.status;
    throw new Error(`${what} printed no URL: ${seen.slice(-800)}`);
  }
  (async () => {
    try {
      while (!(await reader.read()).done) { /* drained */ }
    } catch { /* closed */ }
  })();
  return { url, child };
}
