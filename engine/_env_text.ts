/**
 * The env's observation: the observer's, with the tab list, any open dialog
 * and the task's instruction added.
 *
 * @module
 */
import type { Actor, DialogInfo } from "./act/actor.ts";
import type { Observation, ObserveOptions } from "./observe/observation.ts";
import type { EnvObservation, EnvTab } from "./env_types.ts";
import type { EnvTask } from "./task.ts";
import { activePage, type Episode } from "./_env_episode.ts";

/**
 * Observes the episode's active tab. A page behind an open dialog runs no
 * script: the last view is shown again, with the dialog.
 *
 * @param episode the episode
 * @param options the observe options (the env's defaults with the call's over them)
 * @param task the env's task, whose instruction heads the text
 * @returns the observation as the env returns it
 */
export async function observeEpisode(
  episode: Episode,
  options: ObserveOptions,
  task: EnvTask | undefined,
): Promise<EnvObservation> {
  const { actor, observer } = episode;
  const page = activePage(episode);
  const dialog = actor.dialog;
  const observation = dialog && episode.last
    ? { ...episode.last, diff: { added: [], removed: [], changed: [] } }
    : await observer.observe(page, options);
  if (!dialog) episode.last = observation;
  const tabs = await tabsOf(actor, observation);
  let text = frameText(observation.text, tabs, dialog);
  if (task) text = `task: ${task.instruction}\n${text}`;
  return {
    ...observation,
    text,
    tabs,
    ...(dialog ? { dialog } : {}),
    ...(task ? { task: { id: task.id, instruction: task.instruction } } : {}),
  };
}

/** The tabs of the episode: the active one from the observation, the others from their targets. */
export async function tabsOf(actor: Actor, observation: Observation): Promise<EnvTab[]> {
  return await Promise.all(actor.tabs.map(async (page, index): Promise<EnvTab> => {
    const active = index === actor.tab;
    if (active) return { index, title: observation.title, url: observation.url, active };
    const { targetInfo } = await page.session.connection.send("Target.getTargetInfo", {
      targetId: page.targetId,
    }).catch(() => ({ targetInfo: { title: "", url: "" } }));
    return { index, title: targetInfo.title, url: targetInfo.url, active };
  }));
}

/** Adds the tab list (when there is more than one tab) and any dialog under the header line. */
export function frameText(text: string, tabs: EnvTab[], dialog: DialogInfo | undefined): string {
  const extra: string[] = [];
  if (tabs.length > 1) {
    extra.push(
      `tabs: ${
        tabs.map((tab) =>
          `[${tab.index}] ${JSON.stringify(tab.title || tab.url)}${tab.active ? " (active)" : ""}`
        )
          .join(" · ")
      }`,
    );
  }
  if (dialog) {
    const prompt = dialog.defaultPrompt ? ` default=${JSON.stringify(dialog.defaultPrompt)}` : "";
    extra.push(
      `dialog ${dialog.type} ${
        JSON.stringify(dialog.message)
      }${prompt}: answer it with the "dialog" action`,
    );
  }
  if (extra.length === 0) return text;
  const newline = text.indexOf("\n");
  return newline === -1
    ? [text, ...extra].join("\n")
    : `${text.slice(0, newline)}\n${extra.join("\n")}${text.slice(newline)}`;
}
