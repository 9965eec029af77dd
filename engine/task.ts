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
  /**
   * What the final page says it is, as the application rendered it: a
   * verifier judges the page shown rather than the text of its URL, which
   * an application may read otherwise (`?p=192&error=404` is a 404).
   * Absent when no page could be read.
   */
  page?: PageSignals;
}

/**
 * What a page says it is, read from the document the application rendered
 * (`engine/page_signals.ts`).
 */
export interface PageSignals {
  /**
   * The `<body>` element's `class` attribute: WordPress writes the object it
   * rendered there (`single postid-192`, `error404`, `tag tag-winter`),
   * Redmine the controller and action (`controller-issues action-show`).
   */
  bodyClass: string;
  /**
   * MediaWiki's page configuration (`RLCONF`: `wgPageName`, `wgArticleId`,
   * `wgAction`, `wgRevisionId`, `wgCurRevisionId`…), its scalar entries;
   * absent on a page that has none.
   */
  config?: Record<string, string | number | boolean | null>;
  /**
   * The HTTP status the document was served with (the navigation's
   * `responseStatus`): a 404 or 500 page shows no page a task names,
   * whatever its URL says. Absent when the browser does not report it.
   */
  status?: number;
}

/** A verifier's judgement of one episode. */
export interface Verdict {
  /** `1` when the task was done, `0` when not. */
  reward: 0 | 1;
  /** Why, in words a person can read ("order #1042 is 'pending', expected 'shipped'"). */
  reason: string;
  /**
   * The reward's parts, as far as the verifier knows them, each 0 or 1:
   * `task` (the asked outcome: the answer, the page or the change) and
   * `harm` (1 when the episode changed nothing it was not asked to; absent
   * when the task is itself a change, whose check covers collateral). The
   * reward is 1 only when every part is.
   */
  components?: Readonly<Record<string, number>>;
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
