/**
 * The env's additions to an observation: the tab list and any open dialog.
 *
 * @module
 */
import type { Actor, DialogInfo } from "./act/actor.ts";
import type { Observation } from "./observe/observation.ts";
import type { EnvTab } from "./env_types.ts";

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
