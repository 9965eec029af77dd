// The limits of env containers: defaults sized for the real applications,
// overridable one by one, 0 lifting one, and nonsense refused before any
// daemon is asked.
import { assertEquals, assertRejects, assertThrows } from "@std/assert";
import {
  DEFAULT_LIMITS,
  dockerLimits,
  incusLimits,
  SHARED_RUNTIME_LIMITS,
} from "../../sandboxes/_container_limits.ts";
import { Gateway } from "../../sandboxes/gateway.ts";
import { DockerSandbox } from "../../sandboxes/docker/docker_sandbox.ts";
import { IncusSandbox } from "../../sandboxes/incus/incus_sandbox.ts";
import { SharedRuntimeSandbox } from "../../sandboxes/incus/shared_runtime_sandbox.ts";

Deno.test("incusLimits() gives 1 GiB, 1,024 processes and 2 CPUs unless told otherwise", () => {
  assertEquals(DEFAULT_LIMITS, { memoryMiB: 1024, processes: 1024, cpus: 2 });
  assertEquals(incusLimits(), {
    "limits.memory": "1024MiB",
    "limits.processes": "1024",
    "limits.cpu.allowance": "200ms/100ms",
  });
  assertEquals(incusLimits({ memoryMiB: 512, processes: 0, cpus: 0.5 }), {
    "limits.memory": "512MiB",
    "limits.cpu.allowance": "50ms/100ms",
  });
  assertEquals(incusLimits({}, SHARED_RUNTIME_LIMITS), { "limits.processes": "32768" });
});

Deno.test("dockerLimits() gives the same limits as HostConfig fields, with no swap beyond the memory", () => {
  assertEquals(dockerLimits(), {
    Memory: 1024 * 1024 * 1024,
    MemorySwap: 1024 * 1024 * 1024,
    PidsLimit: 1024,
    NanoCpus: 2_000_000_000,
  });
  assertEquals(dockerLimits({ memoryMiB: 0, cpus: 1.5 }), {
    PidsLimit: 1024,
    NanoCpus: 1_500_000_000,
  });
  // Docker refuses more CPUs than its host has.
  assertEquals(dockerLimits({ cpus: 8 }, 1).NanoCpus, 1_000_000_000);
});

Deno.test("the limits refuse a negative, fractional or infinite value before any daemon is asked", async () => {
  assertThrows(() => incusLimits({ processes: -1 }), RangeError);
  assertThrows(() => incusLimits({ memoryMiB: 1.5 }), RangeError);
  assertThrows(() => dockerLimits({ cpus: Infinity }), RangeError);
  await using gateway = new Gateway();
  // No daemon is asked: the pool and image are never looked up.
  await assertRejects(
    () => IncusSandbox.open({ gateway, image: "x", pool: "x", limits: { processes: -1 } }),
    RangeError,
  );
  await assertRejects(
    () => DockerSandbox.open({ gateway, image: "x", limits: { memoryMiB: NaN } }),
    RangeError,
  );
  await assertRejects(
    () => SharedRuntimeSandbox.open({ gateway, image: "x", pool: "x", limits: { cpus: -2 } }),
    RangeError,
  );
});
