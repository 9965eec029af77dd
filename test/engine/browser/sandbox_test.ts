// Chromium runs with its own sandbox, and never as root: launched from root,
// it runs as an unprivileged user.
import {
  assert,
  assertEquals,
  assertFalse,
  assertNotEquals,
  assertRejects,
  assertStringIncludes,
} from "@std/assert";
import { Browser, browserInternals, newContext } from "../../../engine/browser/browser.ts";
import { BrowserProcess } from "../../../engine/browser/browser_process.ts";

/** The real uid of a process, from /proc/PID/status. */
function uidOf(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const uid = status.match(/^Uid:\s+(\d+)/m)?.[1];
  assert(uid !== undefined, status);
  return Number(uid);
}

/** The command-line arguments of a process. */
function argsOf(pid: number): string[] {
  return Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0").filter((arg) => arg !== "");
}

/** Live processes of a process group, but its leader (the launcher's shell). */
function groupMembers(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name) || Number(entry.name) === pgid) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] !== "Z" && fields[2] === String(pgid)) pids.push(Number(entry.name));
    } catch {
      // exited while we looked
    }
  }
  return pids;
}

/** Whether this machine lets an unprivileged user make a user namespace (Chromium's sandbox). */
function userNamespacesWork(): boolean {
  const probe = Deno.uid() === 0
    ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "unshare", "-U", "true"]
    : ["unshare", "-U", "true"];
  try {
    return new Deno.Command(probe[0]!, { args: probe.slice(1), stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

Deno.test("Browser.launch() runs Chromium sandboxed and, from root, not as root", async () => {
  await using browser = await Browser.launch();
  const process = browserInternals(browser).process!;
  // Chromium's processes (browser, zygotes, renderers…): not the launcher's shell and watchdog.
  const chromium = groupMembers(process.pid).filter((pid) => argsOf(pid)[0]?.includes("chrom"));
  assert(chromium.length > 0, "no Chromium process in the group");
  if (Deno.uid() === 0) {
    for (const pid of chromium) {
      assertNotEquals(uidOf(pid), 0, `process ${pid} (${argsOf(pid)[0]}) runs as root`);
    }
  }
  if (userNamespacesWork()) {
    assert(browser.sandboxed, `not sandboxed: ${process.sandbox.reason}`);
    for (const pid of chromium) {
      assertFalse(argsOf(pid).includes("--no-sandbox"), `process ${pid} runs with --no-sandbox`);
    }
  }
  // And it works: a page loads and runs script.
  const page = await (await newContext(browser)).newPage("data:text/html,<title>ok</title>");
  const { result } = await page.session.send("Runtime.evaluate", { expression: "document.title" });
  assertEquals(result.value, "ok");
});

Deno.test("Browser.launch({ sandbox: false }) says so and runs with --no-sandbox", async () => {
  await using browser = await Browser.launch({ sandbox: false });
  assertEquals(browser.sandboxed, false);
  assert(browserInternals(browser).process!.sandbox.reason, "no reason given");
  const chromium = groupMembers(browserInternals(browser).process!.pid).filter((pid) =>
    argsOf(pid).includes("--no-sandbox")
  );
  assert(chromium.length > 0, "no process runs with --no-sandbox");
});

/**
 * A stand-in for a Chromium whose sandbox cannot start here (no user
 * namespaces, no setuid helper): it dies saying so unless given --no-sandbox.
 */
const NO_USABLE_SANDBOX = `#!/bin/sh
for arg; do [ "$arg" = --no-sandbox ] && unsandboxed=1; done
if [ -z "$unsandboxed" ]; then
  echo "[FATAL:zygote_host_impl_linux.cc(128)] No usable sandbox! ..." >&2
  exit 1
fi
echo "DevTools listening on ws://127.0.0.1:9/devtools/browser/stub" >&2
exec sleep 30
`;

Deno.test("BrowserProcess.launch() falls back to --no-sandbox, saying why, where the sandbox cannot start", async () => {
  const dir = await Deno.makeTempDir({ prefix: "webserv-stub-" });
  // Readable by every user, so that from root the stub runs as the unprivileged one.
  await Deno.chmod(dir, 0o755);
  const executable = `${dir}/no-sandbox-browser`;
  await Deno.writeTextFile(executable, NO_USABLE_SANDBOX, { mode: 0o755 });
  try {
    const first = await BrowserProcess.launch({ executablePath: executable, timeoutMs: 10_000 });
    try {
      assertEquals(first.sandbox.sandboxed, false);
      assertStringIncludes(first.sandbox.reason ?? "", "No usable sandbox");
      assertEquals(first.sandbox.user, "current");
    } finally {
      await first.kill();
    }
    // The next launch of it goes straight to --no-sandbox, with the same reason.
    const second = await BrowserProcess.launch({ executablePath: executable, timeoutMs: 10_000 });
    try {
      assertEquals(second.sandbox, first.sandbox);
    } finally {
      await second.kill();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * A stand-in for a Chromium killed from outside while it starts (a fault, an
 * OOM kill), whose last words mention its sandbox like any Chromium's do.
 */
const KILLED_WHILE_STARTING = `#!/bin/sh
echo "[WARNING:sandbox_linux.cc(418)] InitializeSandbox() called with multiple threads" >&2
kill -KILL $$
`;

Deno.test("a browser killed while it starts is not a sandbox that cannot start: later launches keep it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "webserv-stub-" });
  await Deno.chmod(dir, 0o755);
  const executable = `${dir}/killed-browser`;
  await Deno.writeTextFile(executable, KILLED_WHILE_STARTING, { mode: 0o755 });
  try {
    await assertRejects(() =>
      BrowserProcess.launch({ executablePath: executable, timeoutMs: 10_000 })
    );
    // Had the kill been read as the sandbox failing, the stub would now be
    // launched with --no-sandbox and without a user of its own.
    await Deno.writeTextFile(executable, NO_USABLE_SANDBOX, { mode: 0o755 });
    const next = await BrowserProcess.launch({ executablePath: executable, timeoutMs: 10_000 });
    try {
      assertStringIncludes(
        next.sandbox.reason ?? "",
        "No usable sandbox",
        "it tried the sandbox again",
      );
    } finally {
      await next.kill();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("BrowserProcess.shareFiles() puts copies where the browser's user can read but not change the path", async () => {
  const dir = await Deno.makeTempDir({ prefix: "webserv-test-share-" }); // 0700: root's only
  await Deno.writeTextFile(`${dir}/cv.txt`, "cv", { mode: 0o600 });
  const process = await BrowserProcess.launch();
  try {
    const [shared] = await process.shareFiles([`${dir}/cv.txt`]);
    assert(shared);
    if (process.sandbox.user === "current") {
      assertEquals(shared, `${dir}/cv.txt`, "a browser of this user reads the file itself");
      return;
    }
    assertEquals(shared.split("/").at(-1), "cv.txt", "the page sees the file's own name");
    assertEquals(Deno.readTextFileSync(shared), "cv");
    // Every directory on the way is this process's, so the browser (another
    // user) cannot swap one for a link that sends the next copy elsewhere.
    const parts = shared.split("/").slice(1, -1);
    for (let i = 1; i <= parts.length; i++) {
      const path = `/${parts.slice(0, i).join("/")}`;
      const info = Deno.lstatSync(path);
      assert(info.isDirectory, `${path} is not a directory`);
      assert(
        info.uid === Deno.uid() || (path === "/tmp" && (info.mode! & 0o1000) !== 0),
        `${path} belongs to uid ${info.uid}, not to this process`,
      );
    }
    const file = Deno.lstatSync(shared);
    assertEquals(file.uid, Deno.uid());
    assertEquals(file.mode! & 0o777, 0o644, "readable by the browser's user, writable by none");
  } finally {
    await process.kill();
    await Deno.remove(dir, { recursive: true });
  }
});
