/**
 * One step of a session's episode and what it answers: `ok` with the
 * verifier's reward when the episode ends, `action_error` when the action
 * failed (the episode goes on), `env_error` or `timeout` when we did (never
 * a reward).
 *
 * @module
 */
import { type Action, ActionError, parseAction } from "../../mod.ts";
import { HttpError } from "./http_error.ts";
import type { ObservationMode, StepResponse } from "./protocol.ts";
import { observationBody } from "./_bodies.ts";
import { asEnvError } from "./_failures.ts";
import { observed, type Session, stepFailed, stepped } from "./_session.ts";

/** The longest preview of a refused action kept in trajectories and history. */
export const PREVIEW_CHARS = 1000;

/**
 * An action as received: parsed (the only form stored, sent to listeners
 * or handed to the env), or refused with a bounded preview of what came.
 */
export type Admitted =
  | { ok: true; action: Action }
  | { ok: false; error: ActionError; stored: { invalid: string } };

/**
 * Parses an agent's action before anything runs. Whatever the agent sent
 * (unknown fields, any depth, any size) stops here: a refused action is the
 * agent's `invalid-action`, and only a preview string of it is kept, so
 * nothing downstream serialises the agent's object.
 *
 * @param raw the action as received
 * @returns the parsed action, or the refusal and its preview
 */
export function admit(raw: unknown): Admitted {
  try {
    return { ok: true, action: parseAction(raw) };
  } catch (error) {
    if (!(error instanceof ActionError)) throw error;
    return { ok: false, error, stored: { invalid: preview(raw) } };
  }
}

/**
 * What is stored of an admitted action.
 *
 * @param admitted the admitted action
 * @returns the parsed action, or the refused one's preview
 */
export function storedAction(admitted: Admitted): Action | { invalid: string } {
  return admitted.ok ? admitted.action : admitted.stored;
}

function preview(raw: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(raw) ?? String(raw);
  } catch {
    return "(not serialisable)";
  }
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text;
}

/**
 * Takes one action in the session's episode.
 *
 * @param session the session
 * @param action the action, parsed; a refused one is the agent's `action_error`
 * @param timeoutMs the step's deadline
 * @param elapsed the milliseconds since the step began
 * @returns the step's result; infrastructure failures are results too
 * @throws {HttpError} 409 after the episode ended
 */
export async function takeStep(
  session: Session,
  action: Admitted,
  timeoutMs: number,
  elapsed: () => number,
): Promise<StepResponse> {
  if (session.done) {
    throw new HttpError(
      409,
      "episode-done",
      `The episode of session "${session.id}" is over: reset it`,
    );
  }
  const mode = session.spec.observation ?? "text";
  const stepIndex = session.steps + 1;
  try {
    // The env checks its instance beside the step (`EnvSite.check`): a site
    // that died under the step is an EnvError, whatever the page showed.
    if (!action.ok) throw action.error;
    const step = await session.env.step(action.action, { timeoutMs });
    stepped(session, stepIndex, false);
    const truncated = step.truncated ||
      (!step.done && session.spec.max_steps !== undefined && stepIndex >= session.spec.max_steps);
    const ended = step.done || truncated;
    const verdict = ended && session.env.task ? await session.env.verify() : undefined;
    if (ended) stepped(session, stepIndex, true);
    const answer = step.result.answer;
    const response: StepResponse = {
      status: "ok",
      observation: observationBody(step.observation, mode),
      reward: verdict?.reward ?? 0,
      done: step.done,
      truncated,
      info: {
        step: stepIndex,
        elapsed_ms: elapsed(),
        ...(step.result.settle ? { settle: { ...step.result.settle } } : {}),
        ...(verdict ? { verdict } : {}),
        ...(answer !== undefined ? { answer } : {}),
      },
    };
    observed(session, step.observation);
    return response;
  } catch (error) {
    return await failedStep(session, error, stepIndex, mode, elapsed);
  }
}

async function failedStep(
  session: Session,
  error: unknown,
  stepIndex: number,
  mode: ObservationMode,
  elapsed: () => number,
): Promise<StepResponse> {
  if (error instanceof HttpError) throw error;
  if (error instanceof ActionError) {
    // The agent's failure (a malformed action included): the episode goes on,
    // and the agent sees the page. Anything else, a TypeError included, is ours.
    stepped(session, stepIndex, false);
    const { code, message } = error;
    const truncated = session.spec.max_steps !== undefined && stepIndex >= session.spec.max_steps;
    try {
      const observation = await session.env.observe();
      observed(session, observation);
      const verdict = truncated && session.env.task ? await session.env.verify() : undefined;
      if (truncated) stepped(session, stepIndex, true);
      return {
        status: "action_error",
        observation: observationBody(observation, mode),
        reward: verdict?.reward ?? 0,
        done: false,
        truncated,
        info: {
          step: stepIndex,
          elapsed_ms: elapsed(),
          error: { code, message },
          ...(verdict ? { verdict } : {}),
        },
      };
    } catch (observeError) {
      error = observeError;
    }
  }
  const envError = asEnvError(error);
  stepFailed(session);
  return {
    status: envError.code === "timeout" ? "timeout" : "env_error",
    observation: null,
    done: false,
    truncated: false,
    info: {
      step: session.steps,
      elapsed_ms: elapsed(),
      error: { code: envError.code, message: envError.message },
    },
  };
}
