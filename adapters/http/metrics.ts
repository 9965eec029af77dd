/**
 * The server's counters in Prometheus text format (exposition format 0.0.4):
 * live sessions, steps by status, a step latency histogram, errors by code,
 * and the failures nobody threw (best-effort calls, our own bugs) by kind.
 *
 * @module
 */
import { failureCounts } from "../../engine/log.ts";

/** A label value with its backslashes, quotes and newlines escaped. */
function label(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

const BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The server's metrics.
 *
 * @example Count a step and render
 * ```ts
 * import { Metrics } from "./metrics.ts";
 * const metrics = new Metrics();
 * metrics.step("ok", 0.12);
 * console.assert(metrics.render(1).includes("webserv_steps_total"));
 * ```
 */
export class Metrics {
  #steps = new Map<string, number>();
  #errors = new Map<string, number>();
  #buckets = BUCKETS.map(() => 0);
  #count = 0;
  #sum = 0;
  #created = 0;
  #gauges = new Map<string, { help: string; type: "gauge" | "counter"; read: () => number }>();

  /**
   * Records a step.
   *
   * @param status the step's status
   * @param seconds how long it took
   */
  step(status: string, seconds: number): void {
    this.#steps.set(status, (this.#steps.get(status) ?? 0) + 1);
    this.#count++;
    this.#sum += seconds;
    BUCKETS.forEach((bound, i) => {
      if (seconds <= bound) this.#buckets[i]!++;
    });
  }

  /**
   * Records an error by code (a step's error or a refused request).
   *
   * @param code the error code
   */
  error(code: string): void {
    this.#errors.set(code, (this.#errors.get(code) ?? 0) + 1);
  }

  /** Records a session created. */
  created(): void {
    this.#created++;
  }

  /**
   * Adds a value read at each render, such as a count of held state.
   *
   * @param name the metric's name, `webserv_…`
   * @param help what it counts
   * @param read gives its value now
   * @param type `gauge` (goes up and down) or `counter`
   */
  gauge(name: string, help: string, read: () => number, type: "gauge" | "counter" = "gauge"): void {
    this.#gauges.set(name, { help, type, read });
  }

  /**
   * Renders the metrics.
   *
   * @param live the number of live sessions
   * @param failures the logged failures by kind (by default the process's, from `engine/log.ts`)
   * @returns Prometheus text
   */
  render(live: number, failures: Record<string, number> = failureCounts()): string {
    const lines = [
      "# HELP webserv_live_sessions Sessions open now.",
      "# TYPE webserv_live_sessions gauge",
      `webserv_live_sessions ${live}`,
      "# HELP webserv_sessions_created_total Sessions created.",
      "# TYPE webserv_sessions_created_total counter",
      `webserv_sessions_created_total ${this.#created}`,
      "# HELP webserv_steps_total Steps by status.",
      "# TYPE webserv_steps_total counter",
      ...[...this.#steps].map(([status, n]) => `webserv_steps_total{status="${status}"} ${n}`),
      "# HELP webserv_step_seconds Step latency.",
      "# TYPE webserv_step_seconds histogram",
      ...BUCKETS.map((bound, i) =>
        `webserv_step_seconds_bucket{le="${bound}"} ${this.#buckets[i]}`
      ),
      `webserv_step_seconds_bucket{le="+Inf"} ${this.#count}`,
      `webserv_step_seconds_sum ${this.#sum}`,
      `webserv_step_seconds_count ${this.#count}`,
      "# HELP webserv_errors_total Errors by code.",
      "# TYPE webserv_errors_total counter",
      ...[...this.#errors].map(([code, n]) => `webserv_errors_total{code="${code}"} ${n}`),
      "# HELP webserv_failures_total Failures logged, not thrown (best-effort calls, our bugs), by kind.",
      "# TYPE webserv_failures_total counter",
      ...Object.entries(failures).map(([kind, n]) =>
        `webserv_failures_total{kind="${label(kind)}"} ${n}`
      ),
      ...[...this.#gauges].flatMap(([name, { help, type, read }]) => [
        `# HELP ${name} ${help}`,
        `# TYPE ${name} ${type}`,
        `${name} ${read()}`,
      ]),
    ];
    return lines.join("\n") + "\n";
  }
}
