// Polar's rollout API served by `polar node`: request validation as FastAPI answers it, task
// lifecycle words, and a bundled task of 4 samples run end to end (real sandbox, real harness,
// mock engine), with a callback listener receiving the TaskResult.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { RolloutTrace, STAGE_TIMINGS, TaskResult } from "../protocol/rollout.ts";
import { pinnedBinary } from "../node/harness/common.ts";
import { probeDocker } from "../node/runtime/docker/docker-probe.ts";
import { ADMIN_TOKEN, pollTask, startNodeStack, submit, type NodeStack } from "./helpers/node-stack.ts";
import { testNeeding } from "./helpers/host-tools.ts";
import { rolloutFetch } from "./helpers/rollout-fetch.ts";

// Docker when an engine answers with the bundled image, the process runtime (bwrap) otherwise.
const docker = process.env.DOCKER_HOST ? await probeDocker(["polar-bookworm:dev"]) : { ok: false as const, reason: "DOCKER_HOST unset" };
const RUNTIME = docker.ok ? "docker" : "process";
if (!docker.ok) console.warn(`node-api e2e: process runtime (${docker.reason})`);
const REAL_CLI = "pi";
const hasRealCli = existsSync(pinnedBinary(REAL_CLI));
if (!hasRealCli && process.env.POLAR_REQUIRE_HARNESSES === "1") throw new Error(`the ${REAL_CLI} CLI is not installed`);

let stack: NodeStack;
beforeAll(async () => {
  stack = await startNodeStack({ runtime: RUNTIME, workers: { init: 4, run: 4, postrun: 2, ready_backlog: 2 }, sampling: { max_tokens_cap: 4096 } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
}, 60_000);
const runtimeLeftovers = () => stack.node.runtime.removeLeftovers(stack.node.config.node_id);

describe("bad requests answer 422 naming the field", () => {
  // The whole set of FastAPI words runs against both services in rollout-api-conformance.test.ts.
  const base = { task_id: "x", instruction: "i", agent: { harness: "mini" }, evaluator: { strategy: "none" } };
  const cases: [string, unknown, (string | number)[], string][] = [
    ["agent missing", { task_id: "x", instruction: "i", evaluator: { strategy: "none" } }, ["body", "agent"], "missing"],
    [
      "instruction missing (no task file row)",
      { task_id: "not-a-bundled-task", agent: { harness: "mini" }, evaluator: { strategy: "none" } },
      ["body", "instruction"],
      "missing",
    ],
    ["agent_timeout not positive", { ...base, metadata: { agent_timeout: -1 } }, ["body", "metadata", "agent_timeout"], "greater_than"],
    ["unknown builder", { ...base, builder: { strategy: "magic" } }, ["body", "builder", "strategy"], "literal_error"],
  ];
  for (const [name, body, loc, type] of cases) {
    test(
      name,
      async () => {
        const { status, json } = await submit(stack.node.url, body);
        expect(status).toBe(422);
        expect(json.detail[0]).toMatchObject({ loc, type });
        expect(typeof json.detail[0].msg).toBe("string");
      },
      30_000,
    );
  }

  test("malformed JSON", async () => {
    const { status, json } = await submit(stack.node.url, "{nope");
    expect(status).toBe(422);
    expect(json.detail[0].type).toBe("json_invalid");
  }, 30_000);

  test("unknown task → 404; GET /tasks lists the bundled set; health and status answer", async () => {
    expect((await rolloutFetch(`${stack.node.url}/rollout/task/nope`)).status).toBe(404);
    const tasks = (await (await rolloutFetch(`${stack.node.url}/tasks`)).json()) as { tasks: { task_id: string }[] };
    expect(tasks.tasks.length).toBeGreaterThanOrEqual(16);
    expect(((await (await fetch(`${stack.node.url}/health`)).json()) as { status: string }).status).toBe("ok");
    const status = (await (await rolloutFetch(`${stack.node.url}/rollout/status`)).json()) as { metrics: Record<string, number> };
    expect(Object.keys(status.metrics).sort()).toEqual([
      "init_inflight",
      "init_queue_depth",
      "postrun_inflight",
      "postrun_queue_depth",
      "ready_depth",
      "run_inflight",
    ]);
  }, 30_000);
});

describe("a bundled task end to end", () => {
  // A Python task: in process sandboxes its tests run the host's pytest.
  (RUNTIME === "process" ? testNeeding("pytest") : test)(
    "4 samples of mini: scored, token-faithful traces, every timing filled, callback receives the TaskResult, nothing left over",
    async () => {
      const received: unknown[] = [];
      let attempts = 0;
      const listener = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        async fetch(req) {
          attempts++;
          // The first delivery meets a transient 503: the node must retry.
          if (attempts === 1) return new Response("busy", { status: 503 });
          received.push(await req.json());
          return new Response("ok");
        },
      });
      try {
        const taskId = "py-csv-trailing-empty-field";
        const { status, json } = await submit(stack.node.url, {
          task_id: taskId,
          agent: { harness: "mini" },
          num_samples: 4,
          callback_url: `http://127.0.0.1:${listener.port}/done`,
          metadata: { group_id: "g-7", policy_version: 2, rollout_step: 11 },
        });
        expect(status).toBe(200);
        expect(json).toEqual({ task_id: taskId, status: "running" });
        expect((await submit(stack.node.url, { task_id: taskId, agent: { harness: "mini" } })).status).toBe(409);

        const done = await pollTask(stack.node.url, taskId);
        expect(done.total_sessions).toBe(4);
        expect(done.completed_sessions).toBe(4);
        expect(done.results).toHaveLength(4);
        for (const r of done.results) {
          expect(r.status).toBe("COMPLETED");
          expect(r.metadata).toMatchObject({ group_id: "g-7", policy_version: 2, rollout_step: 11, harness: "mini" });
          expect(typeof r.metadata.reward).toBe("number");
          expect(r.metadata.evaluation).toMatchObject({ strategy: "swe" });
          expect(r.trajectory.traces.length).toBeGreaterThan(0);
          for (const raw of r.trajectory.traces) {
            const t = RolloutTrace.parse(raw);
            expect(t.reward).toBe(r.metadata.reward as number);
            expect(t.prompt_ids.length).toBeGreaterThan(0);
            expect(t.loss_mask.some((m) => m === 1)).toBe(true);
            expect((t.metadata.stats as { trainable_exactly_sampled: number; trainable_tokens: number }).trainable_exactly_sampled).toBe(
              (t.metadata.stats as { trainable_tokens: number }).trainable_tokens,
            );
          }
          for (const key of STAGE_TIMINGS) {
            expect(r.timing[key]).toBeGreaterThan(0);
          }
        }
        // The solving policy at probability 0.5: both rewards among the 4 samples.
        expect(new Set(done.results.map((r) => r.metadata.reward)).size).toBe(2);
        await stack.node.callbacksSettled();
        expect(attempts).toBe(2);
        expect(received).toHaveLength(1);
        const callback = TaskResult.parse(received[0]);
        expect(callback.task_id).toBe(taskId);
        expect(callback.status).toBe(done.status);
        expect(callback.results.map((r) => r.session_id).sort()).toEqual(done.results.map((r) => r.session_id).sort());
        // Every sandbox was destroyed: nothing of this node's is left to remove.
        expect(await stack.node.runtime.removeLeftovers(stack.node.config.node_id)).toBe(0);
      } finally {
        await listener.stop(true);
      }
    },
    240_000,
  );

  test.skipIf(!hasRealCli)(
    `4 samples of a real CLI (${REAL_CLI}) in the sandbox: both rewards, token-faithful traces, nothing left over`,
    async () => {
      const taskId = "js-get-path-falsy-values";
      expect((await submit(stack.node.url, { task_id: taskId, agent: { harness: REAL_CLI }, num_samples: 4 })).status).toBe(200);
      const done = await pollTask(stack.node.url, taskId, 400_000);
      expect(done.status).toBe("completed");
      expect(done.results).toHaveLength(4);
      for (const r of done.results) {
        expect(r.status).toBe("COMPLETED");
        expect(r.metadata.harness).toBe(REAL_CLI);
        for (const raw of r.trajectory.traces) {
          const t = RolloutTrace.parse(raw);
          const stats = t.metadata.stats as { trainable_tokens: number; trainable_exactly_sampled: number };
          expect(stats.trainable_exactly_sampled).toBe(stats.trainable_tokens);
        }
        for (const key of ["init_ms", "run_ms", "postrun_ms", "container_start_ms", "prepare_ms", "agent_exec_ms", "build_ms", "eval_ms", "e2e_ms"] as const) {
          expect(r.timing[key]).toBeGreaterThan(0);
        }
      }
      expect(new Set(done.results.map((r) => r.metadata.reward)).size).toBe(2);
      expect(await stack.node.runtime.removeLeftovers(stack.node.config.node_id)).toBe(0);
    },
    420_000,
  );

  test("DELETE of a task just submitted answers once it is cancelled: no session had finished, none is kept", async () => {
    const taskId = "js-leap-year-century";
    expect((await submit(stack.node.url, { task_id: taskId, agent: { harness: "mini" }, num_samples: 2 })).status).toBe(200);
    const res = await rolloutFetch(`${stack.node.url}/rollout/task/${taskId}`, { method: "DELETE" });
    expect(await res.json()).toEqual({ task_id: taskId, status: "cancelled", total_sessions: 2, completed_sessions: 0, results: [], result_paths: [] });
    expect(await runtimeLeftovers()).toBe(0);
  }, 120_000);
});

describe("admin (admin token)", () => {
  test("gateway pause/resume with a policy version through the node; drain refuses new tasks", async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" };
    const paused = (await (await fetch(`${stack.node.url}/v1/admin/pause`, { method: "POST", headers: admin })).json()) as { paused: boolean };
    expect(paused.paused).toBe(true);
    const resumed = (await (
      await fetch(`${stack.node.url}/v1/admin/resume`, { method: "POST", headers: admin, body: JSON.stringify({ policy_version: 3 }) })
    ).json()) as { paused: boolean; policy_version: number };
    expect(resumed).toMatchObject({ paused: false, policy_version: 3 });
    expect((await fetch(`${stack.node.url}/v1/admin/drain`, { method: "POST" })).status).toBe(401);
    const drained = (await (await fetch(`${stack.node.url}/v1/admin/drain`, { method: "POST", headers: admin })).json()) as { draining: boolean };
    expect(drained.draining).toBe(true);
    expect((await submit(stack.node.url, { task_id: "late", instruction: "x", agent: { harness: "mini" }, evaluator: { strategy: "none" } })).status).toBe(503);
    expect(((await (await rolloutFetch(`${stack.node.url}/rollout/status`)).json()) as { status: string }).status).toBe("draining");
  }, 30_000);
});
