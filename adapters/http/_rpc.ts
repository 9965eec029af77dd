/**
 * MCP's JSON-RPC over one session: `tools/list` (one tool per action, then
 * `observe` and `screenshot`) and `tools/call` (the action, stepped on the
 * session; or a look at it). What OpenEnv's `mcp`
 * WebSocket message carries (openenv-core 0.3.0 `mcp_types.py`): the
 * request in `data`, the JSON-RPC response back in `data`. Reset, verify and
 * reward are not tools: they stay with the trainer. Where a face can address
 * more than one session (`/mcp?session=<id>`), a `fork` tool copies the live
 * episode and answers the new sessions' ids, each bound the same way.
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import { actionTools, parseToolCall } from "../../mod.ts";
import {
  type ForkCreated,
  ForkRequest,
  type ObservationBody,
  type StepResponse,
} from "./protocol.ts";
import type { SessionManager } from "./sessions.ts";

/** What the tools act on: one session. */
export interface RpcSession {
  /** Takes one action. */
  step(action: Record<string, unknown>): Promise<StepResponse>;
  /** Observes the active tab. */
  observe(): Promise<ObservationBody>;
  /** A PNG of the active tab. */
  screenshot(): Promise<Uint8Array>;
  /** Forks the live episode `n` ways; refusals throw the manager's `HttpError`. */
  fork(n: number): Promise<ForkCreated>;
}

/** Which tools a face offers beyond the actions and the looks. */
export interface RpcFace {
  /**
   * Offer the `fork` tool: only where the answer's session ids can be bound
   * (`/mcp?session=<id>`), not on a connection that holds one session.
   * @default false
   */
  fork?: boolean;
}

/**
 * A manager's session as the tools' target.
 *
 * @param sessions the manager
 * @param id the session
 * @returns the target
 */
export function rpcSession(
  sessions: Pick<SessionManager, "step" | "observe" | "screenshot" | "fork">,
  id: string,
): RpcSession {
  return {
    step: (action) => sessions.step(id, { action }),
    observe: () => sessions.observe(id),
    screenshot: () => sessions.screenshot(id, true),
    fork: (n) => sessions.fork(id, n),
  };
}

/** The fork tool: its arguments are the session API's `ForkRequest`, `n` defaulting to 1. */
const FORK_TOOL: McpTool = {
  name: "fork",
  description: "Copy this episode n ways (site and browser state): answers the new sessions' " +
    "ids, each a session of its own to bind with /mcp?session=<id>; this session goes on unchanged",
  inputSchema: forkSchema(),
};

function forkSchema(): Record<string, unknown> {
  const { $schema: _, ...schema } = z.toJSONSchema(
    ForkRequest.extend({
      n: ForkRequest.shape.n.default(1).describe("How many copies of this episode, 1 to 16"),
    }),
    { io: "input" },
  ) as Record<string, unknown>;
  return schema;
}

/** The tools beside the actions: looking, not acting. */
const LOOK_TOOLS: McpTool[] = [
  {
    name: "observe",
    description: "Read the page again: its text with element ids, without acting",
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
  },
  {
    name: "screenshot",
    description: "A PNG of the page, with the element ids drawn on it",
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
  },
];

/** JSON-RPC 2.0 error codes (as OpenEnv's `JsonRpcErrorCode`). */
export const RpcCode = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  SERVER_ERROR: -32000,
} as const;

/** A JSON-RPC 2.0 response. */
export type RpcResponse =
  & { jsonrpc: "2.0"; id: string | number | null }
  & (
    | { result: Record<string, unknown> }
    | { error: { code: number; message: string; data?: unknown } }
  );

/** An MCP tool, as `tools/list` lists it. */
export interface McpTool {
  /** The action's name. */
  name: string;
  /** What it does. */
  description: string;
  /** Its arguments. */
  inputSchema: Record<string, unknown>;
}

/**
 * The MCP tools: one per action, then `observe` and `screenshot`, and
 * `fork` where the face offers it.
 *
 * @param face the face's extra tools
 * @returns the tools
 */
export function mcpTools(face: RpcFace = {}): McpTool[] {
  return [
    ...actionTools("anthropic").map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.input_schema,
    })),
    ...LOOK_TOOLS,
    ...(face.fork ? [FORK_TOOL] : []),
  ];
}

/**
 * An error response.
 *
 * @param id the request's id
 * @param code the JSON-RPC code
 * @param message what went wrong
 * @param data details
 * @returns the response
 */
export function rpcError(
  id: string | number | null,
  code: number,
  message: string,
  data?: unknown,
): RpcResponse {
  return { jsonrpc: "2.0", id, error: { code, message, ...(data !== undefined ? { data } : {}) } };
}

/**
 * A tool call's result from a step: the observation text as content, the
 * step's facts as structured content; an `action_error` is a tool error the
 * agent sees. `env_error`, `timeout` and `expired` are ours: a JSON-RPC error.
 *
 * @param id the request's id
 * @param result the step's result
 * @returns the response
 */
export function callResult(id: string | number | null, result: StepResponse): RpcResponse {
  if (result.status !== "ok" && result.status !== "action_error") {
    return rpcError(id, RpcCode.SERVER_ERROR, `${result.status}: ${result.info.error?.message}`, {
      status: result.status,
      error: result.info.error,
    });
  }
  const text = result.status === "action_error"
    ? `Error (${result.info.error?.code}): ${result.info.error?.message}\n\n${
      result.observation?.text ?? ""
    }`
    : result.observation?.text ?? "";
  return {
    jsonrpc: "2.0",
    id,
    result: {
      content: [{ type: "text", text }],
      structuredContent: {
        status: result.status,
        done: result.done,
        truncated: result.truncated,
        step: result.info.step,
        url: result.observation?.url ?? "",
      },
      isError: result.status === "action_error",
    },
  };
}

/**
 * Answers one JSON-RPC request on a session.
 *
 * @param request the parsed request
 * @param session the session the tools act on; `undefined` when there is none yet
 * @param face the face's extra tools
 * @returns the response
 * @throws {HttpError} when the session refuses a fork (409, 429), for the face to answer
 */
export async function handleRpc(
  request: unknown,
  session: RpcSession | undefined,
  face: RpcFace = {},
): Promise<RpcResponse> {
  if (typeof request !== "object" || request === null || Array.isArray(request)) {
    return rpcError(null, RpcCode.INVALID_REQUEST, "Invalid request: not a JSON-RPC object");
  }
  const { jsonrpc, method, params, id: rawId } = request as Record<string, unknown>;
  const id = typeof rawId === "string" || typeof rawId === "number" ? rawId : null;
  if (jsonrpc !== "2.0" || typeof method !== "string") {
    return rpcError(
      id,
      RpcCode.INVALID_REQUEST,
      'Invalid request: needs jsonrpc "2.0" and a method',
    );
  }
  const args = params ?? {};
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return rpcError(id, RpcCode.INVALID_PARAMS, "Params must be an object");
  }
  switch (method) {
    case "tools/list":
      return { jsonrpc: "2.0", id, result: { tools: mcpTools(face) } };
    case "tools/call": {
      const { name, arguments: callArgs } = args as { name?: unknown; arguments?: unknown };
      if (typeof name !== "string") {
        return rpcError(id, RpcCode.INVALID_PARAMS, 'tools/call needs a tool "name"');
      }
      if (!mcpTools(face).some((tool) => tool.name === name)) {
        return rpcError(id, RpcCode.INVALID_PARAMS, `No tool "${name}": see tools/list`);
      }
      if (session === undefined) {
        return rpcError(id, RpcCode.SERVER_ERROR, "No session: send a reset first");
      }
      if (name === "observe") {
        const observation = await session.observe();
        return {
          jsonrpc: "2.0",
          id,
          result: { content: [{ type: "text", text: observation.text }], isError: false },
        };
      }
      if (name === "fork") return forkResult(id, session, callArgs);
      if (name === "screenshot") {
        const png = await session.screenshot();
        return {
          jsonrpc: "2.0",
          id,
          result: {
            content: [{ type: "image", data: encodeBase64(png), mimeType: "image/png" }],
            isError: false,
          },
        };
      }
      let action: Record<string, unknown>;
      try {
        action = { ...parseToolCall(name, (callArgs ?? {}) as Record<string, unknown>) };
      } catch (error) {
        // The agent's malformed call: a tool error it can read and fix.
        return {
          jsonrpc: "2.0",
          id,
          result: {
            content: [{
              type: "text",
              text: `Error (invalid-action): ${(error as Error).message}`,
            }],
            isError: true,
          },
        };
      }
      return callResult(id, await session.step(action));
    }
    default:
      return rpcError(id, RpcCode.METHOD_NOT_FOUND, `Method not found: "${method}"`);
  }
}

/** The fork tool's answer: the new sessions' ids, as text and as structured content. */
async function forkResult(
  id: string | number | null,
  session: RpcSession,
  callArgs: unknown,
): Promise<RpcResponse> {
  const parsed = ForkRequest.safeParse({ n: 1, ...(callArgs ?? {}) as Record<string, unknown> });
  if (!parsed.success) {
    const detail = parsed.error.issues.map((issue) => issue.message).join("; ");
    return rpcError(id, RpcCode.INVALID_PARAMS, `Invalid fork arguments: ${detail}`);
  }
  const { sessions } = await session.fork(parsed.data.n);
  const forks = sessions.map((fork) => ({ id: fork.id, url: fork.observation.url }));
  const text = `Forked ${forks.length} way(s): ${forks.map((fork) => fork.id).join(", ")}. ` +
    "Each fork is a session of its own, at this step: bind one with /mcp?session=<id>";
  return {
    jsonrpc: "2.0",
    id,
    result: {
      content: [{ type: "text", text }],
      structuredContent: { sessions: forks },
      isError: false,
    },
  };
}

function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}
