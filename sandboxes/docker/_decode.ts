/**
 * Narrows the JSON the Docker daemon sends. Everything from the daemon
 * arrives as `unknown` and passes through here; nothing else casts it.
 * See https://docs.docker.com/reference/api/engine/version/v1.41/.
 *
 * @module
 */

import { int, record, text } from "../_json.ts";

/** The parts of a listed container the sandbox reads. */
export interface ContainerSummary {
  /** The container's id. */
  id: string;
  /** Its names, without the leading slash. */
  names: string[];
  /** Its state, such as `"running"`. */
  state: string;
  /** Its labels. */
  labels: Record<string, string>;
  /** Bytes written to its writable layer. */
  sizeRw: number;
}

/** The parts of `GET /containers/ID/json` the sandbox reads. */
export interface ContainerInspect {
  /** The container's id. */
  id: string;
  /** Whether it is running. */
  running: boolean;
  /** Its status, such as `"exited"`. */
  status: string;
  /** The pid of its init process on the host, `0` when stopped. */
  pid: number;
}

function strings(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (value === null || value === undefined) return out;
  for (const [key, v] of Object.entries(record(value, "labels"))) {
    if (typeof v === "string") out[key] = v;
  }
  return out;
}

/**
 * Reads the daemon's error message out of an error body.
 *
 * @param value the parsed body, or `undefined` when it was not JSON
 * @returns the message, or `""`
 */
export function decodeErrorMessage(value: unknown): string {
  if (typeof value !== "object" || value === null) return "";
  const body = record(value, "a Docker error");
  return text(body["message"]) || text(body["error"]);
}

/**
 * Decodes `GET /containers/json`.
 *
 * @param value the body
 * @returns the containers
 */
export function decodeContainers(value: unknown): ContainerSummary[] {
  if (!Array.isArray(value)) {
    throw new TypeError("Cannot decode the Docker containers: expected a list");
  }
  return value.map((item) => {
    const c = record(item, "a Docker container");
    return {
      id: text(c["Id"]),
      names: Array.isArray(c["Names"])
        ? c["Names"].filter((n): n is string => typeof n === "string")
          .map((n) => n.replace(/^\//, ""))
        : [],
      state: text(c["State"]),
      labels: strings(c["Labels"]),
      sizeRw: int(c["SizeRw"]),
    };
  });
}

/**
 * Decodes `GET /containers/ID/json`.
 *
 * @param value the body
 * @returns the container's id and state
 */
export function decodeInspect(value: unknown): ContainerInspect {
  const c = record(value, "a Docker container");
  const state = record(c["State"] ?? {}, "a Docker container state");
  return {
    id: text(c["Id"]),
    running: state["Running"] === true,
    status: text(state["Status"]),
    pid: int(state["Pid"]),
  };
}

/**
 * Decodes the id out of `POST /containers/create` or `POST /commit`.
 *
 * @param value the body
 * @returns the id
 * @throws {TypeError} when there is none
 */
export function decodeId(value: unknown): string {
  const id = text(record(value, "a Docker reply")["Id"]);
  if (id === "") throw new TypeError("Cannot decode the Docker reply: no id");
  return id;
}

/**
 * Decodes the memory use out of `GET /containers/ID/stats?stream=false`.
 *
 * @param value the body
 * @returns the memory use in bytes
 */
export function decodeMemoryUsage(value: unknown): number {
  const stats = record(value, "Docker stats");
  const memory = record(stats["memory_stats"] ?? {}, "memory stats");
  return int(memory["usage"]);
}

/**
 * Finds the first error in the JSON lines of a streamed reply, such as the
 * progress of `POST /images/create`.
 *
 * @param lines the parsed lines
 * @returns the error message, or `""`
 */
export function decodeStreamError(lines: unknown[]): string {
  for (const line of lines) {
    const message = decodeErrorMessage(line);
    if (message !== "") return message;
  }
  return "";
}

/**
 * The CPUs the daemon's host has, from `GET /info` (`NCPU`): Docker refuses
 * a `NanoCpus` above it.
 *
 * @param value the body
 * @returns the count, at least 1
 */
export function decodeCpuCount(value: unknown): number {
  return Math.max(1, int(record(value, "Docker's info")["NCPU"]));
}
