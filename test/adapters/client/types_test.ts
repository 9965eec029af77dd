// The client's plain types and the server's zod schemas describe the same messages.
import type { z } from "@hono/zod-openapi";
import { assert } from "@std/assert";
import type * as client from "../../../adapters/client/types.ts";
import type * as server from "../../../adapters/http/protocol.ts";

type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true
  : false;

const checks: true[] = [
  true as Same<client.ErrorBody, z.infer<typeof server.ErrorBody>>,
  true as Same<client.SessionSpec, z.infer<typeof server.SessionSpec>>,
  true as Same<client.ObservationBody, z.infer<typeof server.ObservationBody>>,
  true as Same<client.SessionCreated, z.infer<typeof server.SessionCreated>>,
  true as Same<client.GroupCreated, z.infer<typeof server.GroupCreated>>,
  true as Same<client.ForkCreated, z.infer<typeof server.ForkCreated>>,
  true as Same<client.StepResponse, z.infer<typeof server.StepResponse>>,
  true as Same<client.ResetRequest, z.infer<typeof server.ResetRequest>>,
  true as Same<client.SessionState, z.infer<typeof server.SessionState>>,
  true as Same<client.BatchResponse, z.infer<typeof server.BatchResponse>>,
  true as Same<client.HealthBody, z.infer<typeof server.HealthBody>>,
  true as Same<client.VerdictBody, z.infer<typeof server.VerdictBody>>,
  true as Same<client.TaskBody, z.infer<typeof server.TaskBody>>,
  true as Same<client.TaskPage, z.infer<typeof server.TaskPage>>,
  true as Same<client.TaskQuery, z.infer<typeof server.TaskQuery>>,
  true as Same<client.ObservationOptions, z.infer<typeof server.ObservationOptionsBody>>,
];

Deno.test("client types match the server's protocol schemas", () => {
  assert(checks.every(Boolean));
});
