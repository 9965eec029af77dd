/**
 * One shutdown, run in a process of its own so that `WEBSERV_LOG` applies
 * (the log level is read once per process) and stderr holds only its lines:
 *
 * - `settle`: the browser is closed while an env settles its page, the
 *   moment the settle's render barrier is sent;
 * - `env-then-browser`: the env, then the browser, are closed there;
 * - `fill`: the browser is closed while the context pool is making a page,
 *   at the moment the page's target attaches and is being set up;
 * - `kill`: the browser's process group is killed from outside there, then
 *   the browser is closed.
 *
 * Writes `{ "settle": …, "counts": failureCounts() }` as JSON on stdout.
 *
 * @module
 */
import { Browser, Env } from "../../mod.ts";
import { browserInternals, ContextPool, envInternals } from "../../engine/mod.ts";
import { failureCounts } from "../../engine/log.ts";

const mode = Deno.args[0];
const browser = await Browser.launch({ contextPool: 2 });

/**
 * Settles the env's page and calls `then` the moment the settle's render
 * barrier (a `Runtime.callFunctionOn` that waits for frames) is sent, while
 * it is still in flight: a spy on the page session's `send` that passes
 * every call on.
 */
function settleUntilBarrier(env: Env, then: () => void): Promise<string> {
  const session = envInternals(env).page.session as unknown as {
    send(method: string, ...rest: unknown[]): Promise<unknown>;
  };
  const send = session.send.bind(session);
  let fired = false;
  session.send = (method, ...rest) => {
    const sent = send(method, ...rest);
    if (method === "Runtime.callFunctionOn" && !fired) {
      fired = true;
      then();
    }
    return sent;
  };
  return env.settle({ capMs: 60_000, timeoutMs: 60_000 }).then(
    () => "settled",
    (error: { name: string; code?: string }) => `${error.name} ${error.code ?? ""}`.trim(),
  );
}

let settle: string | undefined;
if (mode === "settle" || mode === "env-then-browser" || mode === "kill") {
  const env = await Env.create(browser, { startUrl: "data:text/html,<p>quiet</p>" });
  let closing: Promise<void> = Promise.resolve();
  settle = await settleUntilBarrier(env, () => {
    if (mode === "kill") Deno.kill(-browserInternals(browser).process!.pid, "SIGKILL");
    else if (mode === "env-then-browser") closing = env.close().then(() => browser.close());
    else closing = browser.close();
  });
  await closing;
  await browser.close();
} else if (mode === "fill") {
  const pool = ContextPool.of(browser);
  // Close the browser the moment the pool's page attaches, while the browser
  // sets it up (this listener runs after the browser's own, which has sent
  // the set-up commands). The listener is in place before the fill starts,
  // so the attach it waits for cannot have come and gone already.
  const connection = browserInternals(browser).connection;
  const attached = new Promise<void>((resolve) =>
    connection.on("Target.attachedToTarget", () => {
      void browser.close();
      resolve();
    })
  );
  pool.warm("shutdown scenario", { viewport: { width: 800, height: 600 } });
  if (pool.filling === 0) throw new Error("the pool is not filling");
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    attached,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error("no pooled page attached")), 10_000);
    }),
  ]).finally(() => clearTimeout(timer));
  await browser.close();
} else {
  throw new Error(`unknown scenario "${mode}"`);
}
console.log(JSON.stringify({ settle, counts: failureCounts() }));
