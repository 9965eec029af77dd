/**
 * The trajectory lines of sessions (see `trajectory.ts` for the schema):
 * `start` when an episode starts, `step` after every step (with its
 * screenshot when the spec records them), `end` when the session closes.
 * Nothing is written without a log, and a failed write, serialisation
 * included, is logged, never thrown: the episode and the step's result go
 * on without it.
 *
 * @module
 */
import type { EnvObservation } from "../../mod.ts";
import { logFailure } from "../../engine/log.ts";
import type { StepResponse } from "./protocol.ts";
import type { TrajectoryEvent, TrajectoryLog } from "./trajectory.ts";
import { shoot } from "./_bodies.ts";
import type { Session } from "./_session.ts";

/** Writes the trajectories of the sessions, when there is a log. */
export class Recorder {
  #log: TrajectoryLog | undefined;

  /**
   * Creates the recorder.
   *
   * @param log where trajectories go; none are written when absent
   */
  constructor(log: TrajectoryLog | undefined) {
    this.#log = log;
  }

  /**
   * Records the start of an episode.
   *
   * @param session the session
   * @param observation the episode's first observation
   */
  async start(
    session: Pick<Session, "id" | "episode" | "placement" | "group">,
    observation: EnvObservation,
  ): Promise<void> {
    await this.#append(session.id, {
      type: "start",
      episode: session.episode,
      // The GRPO group, so a finished run's groups are read back from its files.
      ...(session.group !== undefined ? { group: session.group } : {}),
      task: session.placement?.task?.id ?? null,
      instruction: session.placement?.task?.instruction ?? null,
      url: observation.url,
      observation: observation.text,
    });
  }

  /**
   * Records a step, with a screenshot after it when the spec asks for them,
   * and beside the screenshot the element marks of the step's observation.
   *
   * @param session the session, after the step
   * @param action the action taken, as parsed (or a refused one's preview)
   * @param response the step's result
   */
  async step(
    session: Pick<
      Session,
      "id" | "episode" | "spec" | "env" | "done" | "url" | "task" | "marks"
    >,
    action: unknown,
    response: StepResponse,
  ): Promise<void> {
    const log = this.#log;
    if (!log) return;
    let screenshot: string | undefined;
    if (session.spec.record_screenshots && response.status !== "env_error" && !session.done) {
      // A missing screenshot leaves the step recorded without one, counted.
      const png = await shoot(session.env, false).catch((error) =>
        logFailure("screenshot for the trajectory", error)
      );
      if (png) {
        screenshot = await log.screenshot(
          `${session.id}-${session.episode}-${response.info.step}.png`,
          png,
        ).catch((error) => {
          logFailure("write a trajectory screenshot", error);
          return undefined;
        });
      }
    }
    await this.#append(session.id, {
      type: "step",
      episode: session.episode,
      step: response.info.step,
      action,
      status: response.status,
      ...(response.reward !== undefined ? { reward: response.reward } : {}),
      done: response.done,
      truncated: response.truncated,
      observation: response.observation?.text ?? null,
      url: response.observation?.url ?? session.url,
      elapsed_ms: response.info.elapsed_ms,
      ...(response.info.settle ? { settle: response.info.settle } : {}),
      ...(response.info.error ? { error: response.info.error } : {}),
      ...(response.info.verdict ? { verdict: response.info.verdict } : {}),
      // What the verifier judged, for `deno task export --reverify`.
      ...(response.info.verdict && session.task?.judged ? { judged: session.task.judged } : {}),
      ...(screenshot ? { screenshot } : {}),
      // The boxes the step's observation saw, for the viewer's marks over the raw picture.
      ...(screenshot && session.marks ? { marks: session.marks } : {}),
    });
  }

  /**
   * Copies a parent's current episode, start and steps, to a fork's
   * trajectory: the fork's file begins with the prefix it shares, its start
   * line naming the parent (`forked_from`).
   *
   * @param parent the session forked, with its current episode
   * @param fork the new session's id
   */
  async fork(parent: Pick<Session, "id" | "episode">, fork: string): Promise<void> {
    const log = this.#log;
    if (!log) return;
    try {
      await log.flush();
      const events = await log.read(parent.id);
      for (const event of events) {
        if (event["episode"] !== parent.episode || event.type === "end") continue;
        const { v: _v, t: _t, session: _session, ...rest } = event;
        const copied = rest as TrajectoryEvent;
        await log.append(
          fork,
          copied.type === "start" ? { ...copied, forked_from: parent.id } : copied,
        );
      }
    } catch (error) {
      logFailure("copy the trajectory to a fork", error);
    }
  }

  /**
   * Records the end of a session.
   *
   * @param id the session
   * @param episode its last episode
   * @param reason why it closed
   */
  async end(id: string, episode: number, reason: string): Promise<void> {
    await this.#append(id, { type: "end", episode, reason });
  }

  /** Waits for every pending write. */
  async flush(): Promise<void> {
    await this.#log?.flush();
  }

  async #append(id: string, event: TrajectoryEvent): Promise<void> {
    try {
      // `append` serialises at once: a value it cannot serialise throws here, not in the caller.
      await this.#log?.append(id, event);
    } catch (error) {
      logFailure("write the trajectory", error);
    }
  }
}
