/**
 * The task shape the engine needs: what to tell the agent, where an episode
 * starts, and how its outcome is scored. Recreated sites implement it (see
 * `fixtures/sites/`), so the engine never imports a site or a sandbox.
 *
 * @module
 */

/** What an episode ended with, as the verifier sees it. */
export interface EpisodeOutcome {
  /** The agent's `stop` answer, if it gave one. */
  answer?: string;
  /** The active tab's URL when the episode ended. */
  url: string;
}

/** A verifier's judgement of one episode. */
export interface Verdict {
  /** `1` when the task was done, `0` when not. */
  reward: 0 | 1;
  /** Why, in words a person can read ("order #1042 is 'pending', expected 'shipped'"). */
  reason: string;
}

/** A task an env runs: an instruction, a start page and a verifier. */
export interface EnvTask {
  /** The task's id, such as `"shop/add-to-cart/7"`. */
  readonly id: string;
  /** What the agent is asked to do. */
  readonly instruction: string;
  /** Where each episode starts: a path on the site's origin, or an absolute URL. */
  readonly startUrl: string;
  /**
   * Runs when an episode starts, after the site was reset and before the
   * start page opens: applies the task's setup and records the state the
   * verifier compares against.
   */
  begin?(): Promise<void>;
  /**
   * Scores the episode from the site's state and the outcome.
   *
   * @param outcome the agent's answer and the final URL
   * @returns the reward and its reason
   */
  verify(outcome: EpisodeOutcome): Promise<Verdict>;
}
