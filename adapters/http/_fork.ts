/**
 * A session's fork: k copies of its live episode, each on a copy of the
 * sandbox instance (`Instance.fork()`, taken while the parent waits) and of
 * the browser state (`Env.fork()`), with the task bound to the copy and
 * carrying the episode's start.
 *
 * @module
 */
import type { BranchAt, Env, EnvBranch } from "../../mod.ts";
import type { Instance } from "../../sandboxes/mod.ts";
import type { ServedTask } from "./catalog.ts";
import { envCall } from "./_failures.ts";
import { HttpError } from "./http_error.ts";
import type { Session } from "./_session.ts";

/** What one fork runs on: its env, and the instance and task it owns. */
export interface ForkRuntime {
  /** The fork's env. */
  env: Env;
  /** The copy of the parent's instance; none for a bare-URL session. */
  instance: Instance | undefined;
  /** The task bound to the copy, if the parent has one. */
  task: ServedTask | undefined;
}

/**
 * Forks a session's env `n` ways, in the parent's turn (the caller holds its
 * queue).
 *
 * @param parent the session
 * @param n how many forks
 * @param timeoutMs the deadline of the fork
 * @returns the forks' runtimes; nothing is left open on failure
 * @throws {HttpError} 409 after the episode ended or when the backend
 *   cannot copy a running instance, 503 when a copy or the browser fails
 */
export async function forkRuntimes(
  parent: Session,
  n: number,
  timeoutMs: number,
): Promise<ForkRuntime[]> {
  if (parent.done) {
    throw new HttpError(
      409,
      "episode-ended",
      `Cannot fork session "${parent.id}": its episode ended; reset it first`,
    );
  }
  const instance = parent.instance;
  if (instance && !instance.fork) {
    throw new HttpError(
      409,
      "fork-unsupported",
      `Cannot fork session "${parent.id}": its backend cannot copy a running instance`,
    );
  }
  const made: { instance: Instance | undefined; task: ServedTask | undefined }[] = [];
  const branch = async (at?: BranchAt): Promise<EnvBranch> => {
    // On a spare origin, whose context the engine made ahead.
    const copy = await instance!.fork!(at ? { origin: at.origin } : {});
    let task: ServedTask | undefined;
    try {
      const served = parent.task;
      task = served?.fork ? await served.fork(copy) : parent.placement?.bind?.(copy);
    } catch (error) {
      await copy.destroy();
      throw error;
    }
    made.push({ instance: copy, task });
    return { site: copy, ...(task ? { task } : {}), release: () => copy.destroy() };
  };
  const envs = await envCall(() =>
    parent.env.fork(n, { timeoutMs, ...(instance ? { branch } : {}) })
  );
  // `branch` runs once per fork, in order: the i-th copy is the i-th env's.
  return envs.map((env, i) => ({
    env,
    instance: made[i]?.instance,
    task: made[i]?.task,
  }));
}
