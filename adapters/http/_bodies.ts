/**
 * What the sessions answer, in the protocol's shapes: observations, states,
 * new sessions and screenshots.
 *
 * @module
 */
import type { Env, EnvObservation } from "../../mod.ts";
import type {
  LeaseBody,
  ObservationBody,
  ObservationMode,
  SessionCreated,
  SessionState,
  TaskBody,
} from "./protocol.ts";
import type { Session } from "./_session.ts";
import { envInternals } from "../../engine/mod.ts";

/**
 * Turns an env observation into the protocol's shape.
 *
 * @param observation the env's observation
 * @param mode what to include
 * @returns the observation body
 */
export function observationBody(
  observation: EnvObservation,
  mode: ObservationMode,
): ObservationBody {
  return {
    text: observation.text,
    url: observation.url,
    title: observation.title,
    tabs: observation.tabs,
    ...(mode === "json"
      ? { elements: observation.elements.map((element) => ({ ...element })) }
      : {}),
    ...(mode !== "text" ? { diff: observation.diff } : {}),
    ...(observation.dialog ? { dialog: { ...observation.dialog } } : {}),
  };
}

/**
 * A session's state.
 *
 * @param session the session
 * @param lease its lease
 * @returns the state body
 */
export function stateOf(session: Session, lease: LeaseBody): SessionState {
  const task: TaskBody | null = session.placement?.task ?? null;
  return {
    id: session.id,
    task,
    step: session.steps,
    url: session.url,
    elapsed_s: Math.round((Date.now() - session.createdAt) / 100) / 10,
    created_at: new Date(session.createdAt).toISOString(),
    done: session.done,
    rewards: [...session.rewards],
    lease,
    ...(session.group ? { group: session.group } : {}),
  };
}

/**
 * The answer to a create or reset: the episode's first observation.
 *
 * @param session the session
 * @param observation its first observation
 * @param lease its lease
 * @returns the body
 */
export function createdBody(
  session: Pick<Session, "id" | "spec" | "placement" | "group">,
  observation: EnvObservation,
  lease: LeaseBody,
): SessionCreated {
  return {
    id: session.id,
    observation: observationBody(observation, session.spec.observation ?? "text"),
    lease,
    task: session.placement?.task ?? null,
    ...(session.group ? { group: session.group } : {}),
  };
}

/**
 * A PNG of the env's active tab.
 *
 * @param env the env
 * @param marks whether to draw the id boxes
 * @returns the PNG bytes
 */
export function shoot(env: Env, marks: boolean): Promise<Uint8Array> {
  return envInternals(env).withPage(async (page) => {
    if (marks) return (await envInternals(env).observer.setOfMarks(page)).png;
    const shot = await page.session.send("Page.captureScreenshot", { format: "png" });
    return Uint8Array.from(atob(shot.data), (c) => c.charCodeAt(0));
  });
}
