/**
 * One ORS tool call as one step, and its answer as ORS's `RunToolOutput`:
 * the agent's failures (an `action_error`, arguments a tool refuses) are an
 * error text it reads; ours (`env_error`, `timeout`, `expired`) and an
 * unknown tool are `{ok: false}`, which the client raises; never a reward.
 *
 * @module
 */
import { actionTools, parseToolCall, type ToolSchema } from "../../../mod.ts";
import type { StepResponse } from "../protocol.ts";
import type { SessionManager } from "../sessions.ts";
import { ORS_ENV } from "./_ors_schemas.ts";

/**
 * One tool per action, as ORS lists them.
 *
 * @returns the tools
 */
export function orsTools(): { name: string; description: string; input_schema: ToolSchema }[] {
  return actionTools("anthropic").map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.input_schema,
  }));
}

/**
 * One tool call's outcome, as ORS's `RunToolOutput`.
 *
 * @param sessions the sessions
 * @param id the WebServ session
 * @param call the tool's name and input, and the step's request id
 * @returns the output
 */
export async function orsCall(
  sessions: SessionManager,
  id: string,
  call: { name: string; input: Record<string, unknown>; requestId: string },
): Promise<Record<string, unknown>> {
  const { name, input, requestId } = call;
  if (!orsTools().some((tool) => tool.name === name)) {
    return { ok: false, error: `'${name}' is not a valid tool: see /${ORS_ENV}/tools` };
  }
  let action: Record<string, unknown>;
  try {
    action = { ...parseToolCall(name, input) };
  } catch (error) {
    // The agent's malformed call: an error it reads and fixes; no step taken.
    return output(
      `Error (invalid-action): ${(error as Error).message}`,
      {
        status: "action_error",
      },
      0,
      false,
    );
  }
  const result = await sessions.step(id, { action, request_id: requestId });
  return stepOutput(result);
}

/** A successful output: one text block, its metadata, reward and whether the episode finished. */
function output(
  text: string,
  metadata: Record<string, unknown>,
  reward: number | null,
  finished: boolean,
): Record<string, unknown> {
  return { ok: true, output: { blocks: [{ type: "text", text }], metadata, reward, finished } };
}

/**
 * A step as ORS's `RunToolOutput`: our failures are `{ok: false}`.
 *
 * @param result the step
 * @returns the output
 */
function stepOutput(result: StepResponse): Record<string, unknown> {
  if (result.status !== "ok" && result.status !== "action_error") {
    return { ok: false, error: `${result.status}: ${result.info.error?.message ?? "failed"}` };
  }
  const page = result.observation?.text ?? "";
  const text = result.status === "action_error"
    ? `Error (${result.info.error?.code}): ${result.info.error?.message}\n\n${page}`
    : page;
  return output(
    text,
    {
      status: result.status,
      step: result.info.step,
      done: result.done,
      truncated: result.truncated,
      url: result.observation?.url ?? "",
      ...(result.info.verdict ? { verdict: result.info.verdict } : {}),
      ...(result.info.answer !== undefined ? { answer: result.info.answer } : {}),
    },
    result.reward ?? null,
    result.done || result.truncated,
  );
}
