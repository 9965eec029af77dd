// A fork of a live episode on Incus containers: the forum's upvote-post solver runs in an env
// whose site is an Incus container, to the step before its last action; the container is
// frozen while a snapshot of its data is cut, and each fork runs on a copy of that snapshot.
// Forks that stop earn 1, the fork that withdraws the vote earns 0, the parent still earns 1.
import { Browser } from "../../../engine/browser/browser.ts";
import forum from "../../../fixtures/sites/forum/mod.ts";
import { click } from "../../../fixtures/sites/kit/solve.ts";
import { Gateway } from "../../../sandboxes/gateway.ts";
import { assertForkMidEpisode } from "../../_util/fork_episode.ts";
import { openForumSandbox } from "./_forum.ts";

Deno.test("IncusSandbox fork mid-episode: forks that stop earn 1, one that undoes earns 0, the parent keeps 1", async () => {
  await using gateway = new Gateway();
  await using sandbox = await openForumSandbox(gateway);
  await using browser = await Browser.launch();
  await using instance = await sandbox.create({ seed: 1 });
  await assertForkMidEpisode({
    browser,
    site: forum,
    template: "upvote-post",
    seed: 1,
    instance,
    // Voting the same way twice withdraws the vote.
    undo: async (env) => void await click(env, "button", "Upvote post"),
  });
});
