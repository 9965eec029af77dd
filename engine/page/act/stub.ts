/**
 * The short function an action sends to call the act library by name (see
 * `library.ts`): bundled into `ACT_STUB`, it finds the library the observer
 * installed in its world and answers `LIBRARY_MISSING` when there is none,
 * so that the actor sends the whole bundle instead.
 *
 * @module
 */
import { ACT_GLOBAL, type ActName, LIBRARY_MISSING } from "../../act/_in_page.ts";
import type { ACT_FUNCTIONS, dispatch } from "./library.ts";

/** The library as `installAct` leaves it on the global. */
interface Installed {
  ACT_FUNCTIONS: typeof ACT_FUNCTIONS;
  dispatch: typeof dispatch;
}

/**
 * Calls a library function by name.
 *
 * @param name the function
 * @param local the element's id in the observer's world, or `null` to use `this`
 * @param args the function's arguments
 * @returns its answer, or `LIBRARY_MISSING`
 */
export function run(
  this: unknown,
  name: ActName,
  local: number | null,
  ...args: unknown[]
): unknown {
  const lib = (globalThis as unknown as Record<string, Installed | undefined>)[ACT_GLOBAL];
  if (!lib) return LIBRARY_MISSING;
  return lib.dispatch(lib.ACT_FUNCTIONS, name, local, this, args);
}
