/**
 * Narrows the JSON the Incus daemon sends. Everything from the daemon arrives
 * as `unknown` and passes through here; nothing else casts it.
 * See https://linuxcontainers.org/incus/docs/main/rest-api/ for the shapes.
 *
 * @module
 */

/** The envelope of every Incus response. */
import { int, record, text } from "../_json.ts";
export interface Envelope {
  type: "sync" | "async" | "error";
  statusCode: number;
  error: string;
  errorCode: number;
  operation: string;
  metadata: unknown;
}

/** A background operation. */
export interface Operation {
  /** The operation's id. */
  id: string;
  /** Its status, such as `"Success"`. */
  status: string;
  /** Its status code. */
  statusCode: number;
  /** Its error message, `""` when none. */
  err: string;
  /** What it returned. */
  metadata: unknown;
}

/** The parts of an instance the sandbox reads. */
export interface InstanceSummary {
  /** The instance's name. */
  name: string;
  /** Its status, such as `"Running"`. */
  status: string;
  /** Its config keys, such as `user.webserv.owner`. */
  config: Record<string, string>;
  /** The cluster member it is on; `"none"` or `""` off a cluster. */
  location: string;
}

/** A member of an Incus cluster. */
export interface ClusterMember {
  /** The member's name, what `?target=` names. */
  name: string;
  /** Its status, such as `"Online"` or `"Offline"`. */
  status: string;
  /** Its cluster address, such as `"https://10.0.0.2:8443"`. */
  url: string;
}

/** The parts of an instance's state the sandbox reads. */
export interface InstanceState {
  /** Its status, such as `"Running"`. */
  status: string;
  /** The pid of its init process on the host. */
  pid: number;
  /** Memory in use, in bytes. */
  memoryUsage: number;
}

/**
 * Decodes a response envelope.
 *
 * @param value the parsed JSON body
 * @returns the envelope
 * @throws {TypeError} when the body is not an Incus envelope
 */
export function decodeEnvelope(value: unknown): Envelope {
  const body = record(value, "the Incus response");
  const type = body["type"];
  if (type !== "sync" && type !== "async" && type !== "error") {
    throw new TypeError(
      `Cannot decode the Incus response: unknown type "${String(type)}"`,
    );
  }
  return {
    type,
    statusCode: int(body["status_code"]),
    error: text(body["error"]),
    errorCode: int(body["error_code"]),
    operation: text(body["operation"]),
    metadata: body["metadata"],
  };
}

/**
 * Decodes an operation.
 *
 * @param value an operation's JSON
 * @returns the operation
 */
export function decodeOperation(value: unknown): Operation {
  const op = record(value, "an Incus operation");
  return {
    id: text(op["id"]),
    status: text(op["status"]),
    statusCode: int(op["status_code"]),
    err: text(op["err"]),
    metadata: op["metadata"],
  };
}

/**
 * Decodes `GET /1.0/instances?recursion=1`.
 *
 * @param value the metadata
 * @returns the instances
 */
export function decodeInstances(value: unknown): InstanceSummary[] {
  if (!Array.isArray(value)) {
    throw new TypeError("Cannot decode the Incus instances: expected a list");
  }
  return value.map((item) => {
    const instance = record(item, "an Incus instance");
    const config: Record<string, string> = {};
    for (
      const [key, v] of Object.entries(
        record(instance["config"] ?? {}, "config"),
      )
    ) {
      if (typeof v === "string") config[key] = v;
    }
    return {
      name: text(instance["name"]),
      status: text(instance["status"]),
      config,
      location: text(instance["location"]),
    };
  });
}

/**
 * Decodes `GET /1.0/cluster/members?recursion=1`.
 *
 * @param value the metadata
 * @returns the members
 * @throws {TypeError} when it is not a list of members
 */
export function decodeClusterMembers(value: unknown): ClusterMember[] {
  if (!Array.isArray(value)) {
    throw new TypeError("Cannot decode the Incus cluster members: expected a list");
  }
  return value.map((item) => {
    const member = record(item, "an Incus cluster member");
    return {
      name: text(member["server_name"]),
      status: text(member["status"]),
      url: text(member["url"]),
    };
  });
}

/**
 * Decodes `GET /1.0/instances/NAME/state`.
 *
 * @param value the metadata
 * @returns the state
 */
export function decodeInstanceState(value: unknown): InstanceState {
  const state = record(value, "an Incus instance state");
  const memory = state["memory"] === undefined || state["memory"] === null
    ? {}
    : record(state["memory"], "memory");
  return {
    status: text(state["status"]),
    pid: int(state["pid"]),
    memoryUsage: int(memory["usage"]),
  };
}

/**
 * Decodes the fingerprint out of an alias or an image-import operation.
 *
 * @param value the alias (`target`) or the operation metadata (`fingerprint`)
 * @returns the image fingerprint
 * @throws {TypeError} when there is none
 */
export function decodeFingerprint(value: unknown): string {
  const body = record(value, "an Incus image reference");
  const fingerprint = text(body["target"]) || text(body["fingerprint"]);
  if (fingerprint === "") {
    throw new TypeError("Cannot decode the Incus image: no fingerprint");
  }
  return fingerprint;
}

/**
 * Decodes `GET /1.0/images`: the fingerprints of the images.
 *
 * @param value the metadata, a list of image URLs
 * @returns the fingerprints
 * @throws {TypeError} when it is not a list
 */
export function decodeImageList(value: unknown): string[] {
  if (!Array.isArray(value)) throw new TypeError("Cannot decode the Incus images: not a list");
  return value.map((url) => text(url).replace(/^.*\//, "")).filter((fingerprint) => fingerprint);
}

/**
 * Decodes the properties of `GET /1.0/images/FINGERPRINT`.
 *
 * @param value the metadata
 * @returns the image's properties
 */
export function decodeImageProperties(value: unknown): Record<string, string> {
  const image = record(value, "an Incus image");
  const properties: Record<string, string> = {};
  const raw = image["properties"];
  if (raw !== undefined && raw !== null) {
    for (const [key, v] of Object.entries(record(raw, "properties"))) {
      if (typeof v === "string") properties[key] = v;
    }
  }
  return properties;
}

/**
 * Decodes the bytes in use out of `GET /1.0/storage-pools/NAME/resources`.
 *
 * @param value the metadata
 * @returns the bytes used and the pool's size
 */
export function decodePoolSpace(
  value: unknown,
): { used: number; total: number } {
  const resources = record(value, "Incus pool resources");
  const space = record(resources["space"] ?? {}, "pool space");
  return { used: int(space["used"]), total: int(space["total"]) };
}

/** The host ids of a container's root, from its idmap. */
export interface RootIds {
  uid: number;
  gid: number;
}

/**
 * The host uid and gid of a container's root, from its `volatile.idmap.next`
 * (set when the instance is created; what its next start maps): a list of
 * `{Isuid, Isgid, Hostid, Nsid, Maprange}`. An empty or absent map is a
 * privileged container, whose root is the host's.
 *
 * @param idmap the config value, or undefined
 * @returns the ids
 * @throws {TypeError} when it is no idmap, or maps no root
 */
export function decodeRootIds(idmap: string | undefined): RootIds {
  if (idmap === undefined || idmap === "" || idmap === "[]") return { uid: 0, gid: 0 };
  const entries: unknown = JSON.parse(idmap);
  if (!Array.isArray(entries)) throw new TypeError(`Cannot decode the Incus idmap: ${idmap}`);
  const root = (kind: "Isuid" | "Isgid"): number => {
    for (const item of entries) {
      const entry = record(item, "an idmap entry");
      const host = int(entry["Hostid"]);
      const from = int(entry["Nsid"]);
      const range = int(entry["Maprange"]);
      if (entry[kind] === true && from <= 0 && 0 < from + range) return host - from;
    }
    throw new TypeError(
      `The Incus idmap maps no root ${kind === "Isuid" ? "uid" : "gid"}: ${idmap}`,
    );
  };
  return { uid: root("Isuid"), gid: root("Isgid") };
}
