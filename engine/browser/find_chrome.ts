/**
 * Finds a Chromium or Chrome executable on this machine.
 *
 * @module
 */

/** Raised when no Chromium or Chrome executable can be found. */
export class BrowserNotFoundError extends Error {
  /** The places that were searched, in order. */
  readonly searched: string[];

  /**
   * Creates the error, listing where it looked.
   *
   * @param searched the places that were searched
   * @param options the cause, if any
   */
  constructor(searched: string[], options?: ErrorOptions) {
    super(
      `Cannot find a Chromium or Chrome executable: searched ${searched.join(", ")}. ` +
        `Install one (Debian/Ubuntu: "apt-get install chromium-headless-shell chromium"; macOS: "brew install --cask chromium"; ` +
        `or "npx @puppeteer/browsers install chrome-headless-shell@stable") ` +
        `or set WEBSERV_CHROME to its path`,
      options,
    );
    this.name = "BrowserNotFoundError";
    this.searched = searched;
  }
}

import { envVar, isExecutableSync, listDir } from "../_runtime.ts";

const NAMES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"];

/**
 * The old headless shell, first choice for headless runs: it draws no
 * browser UI, where Chromium's own headless mode lays out and paints a
 * window (toolbar, omnibox) for every context. On the site checker it cut the
 * browser process's CPU by 2.7x and the browser's whole CPU per episode by
 * 43% (`bench/results/browser_cpu.md`).
 */
const HEADLESS_NAMES = ["chrome-headless-shell", "chromium-headless-shell"];

const MAC_APPS = [
  "/Applications/Chromium.app/Contents/MacOS/Chromium",
  "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
];

const isExecutable = isExecutableSync;

function* puppeteerCache(home: string | undefined): Generator<string> {
  const root = envVar("PUPPETEER_CACHE_DIR") ?? (home ? `${home}/.cache/puppeteer` : undefined);
  if (!root) return;
  for (const product of ["chrome", "chrome-headless-shell", "chromium"]) {
    const versions = listDir(`${root}/${product}`);
    // Newest build first: names look like "linux-131.0.6778.85".
    versions.sort((a, b) => b.localeCompare(a, "en", { numeric: true }));
    for (const version of versions) {
      const dir = `${root}/${product}/${version}`;
      for (const entry of safeReadDir(dir)) {
        for (const binary of ["chrome", "chrome-headless-shell", "chromium"]) {
          yield `${dir}/${entry}/${binary}`;
        }
      }
    }
  }
}

function safeReadDir(dir: string): string[] {
  return listDir(dir, true);
}

/** Options of {@linkcode findChrome}. */
export interface FindChromeOptions {
  /**
   * Whether the browser will run headless; then a headless shell on `PATH`
   * comes first.
   *
   * @default {true}
   */
  headless?: boolean;
}

/**
 * Finds a browser executable: `WEBSERV_CHROME`, then (for headless runs)
 * `chrome-headless-shell` or `chromium-headless-shell` on `PATH`, then
 * `chromium`, `chromium-browser`, `google-chrome` (and kin) on `PATH`, then
 * the usual macOS locations, then puppeteer's browser cache.
 *
 * @param options whether the browser will run headless
 * @returns the absolute path of an executable
 * @throws {BrowserNotFoundError} when none is found; the message says how to install one
 *
 * @example Find the browser
 * ```ts ignore
 * import { findChrome } from "@webserv/webserv/engine";
 * console.log(findChrome()); // "/usr/bin/chromium-headless-shell"
 * ```
 */
export function findChrome(options: FindChromeOptions = {}): string {
  const searched: string[] = [];
  const fromEnv = envVar("WEBSERV_CHROME");
  if (fromEnv) {
    if (isExecutable(fromEnv)) return fromEnv;
    throw new BrowserNotFoundError([`WEBSERV_CHROME="${fromEnv}" (not an executable file)`]);
  }
  searched.push("WEBSERV_CHROME (unset)");
  const path = envVar("PATH") ?? "/usr/local/bin:/usr/bin:/bin";
  const names = options.headless === false ? NAMES : [...HEADLESS_NAMES, ...NAMES];
  for (const name of names) {
    for (const dir of path.split(":")) {
      if (dir && isExecutable(`${dir}/${name}`)) return `${dir}/${name}`;
    }
  }
  searched.push(`${names.join(", ")} on PATH`);
  for (const app of MAC_APPS) if (isExecutable(app)) return app;
  searched.push("/Applications");
  for (const candidate of puppeteerCache(envVar("HOME"))) {
    if (isExecutable(candidate)) return candidate;
  }
  searched.push("the puppeteer cache");
  throw new BrowserNotFoundError(searched);
}
