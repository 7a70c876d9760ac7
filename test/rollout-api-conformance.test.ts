// One set of rollout-API conformance tests, run against both services that serve NVIDIA's rollout
// API: a standalone `polar node`, and a coordinator with a real node attached (process runtime,
// the project's mock engine). Each test checks a behaviour of Polar's Python rollout server
// (NVIDIA-NeMo/ProRL-Agent-Server: rollout/server.py, manager.py, models.py, slime_bridge) as
// docs/rollout-api.md writes it down: submissions shaped exactly as the slime bridge builds them
// (integer metadata), FastAPI's 422 words, DELETE's answers, status words, callbacks read by a
// Python listener, and the bounds (ids, num_samples, body size and depth) with the service still up.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { TaskStatus } from "../protocol/rollout.ts";
import { TrainerClient } from "../clients/typescript/trainer-client.ts";
import { TOKENS, waitFor } from "./support/coordinator/cluster.ts";
import { BUNDLED_TASKS_FILE } from "../node/api/task-catalog.ts";
import { PythonCallbackListener, startTarget, type RolloutTarget, type TargetKind } from "./helpers/rollout-targets.ts";
import { rolloutFetch } from "./helpers/rollout-fetch.ts";

const T = 120_000;

async function submit(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await rolloutFetch(`${url}/rollout/task/submit`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

async function get(url: string, taskId: string): Promise<{ status: number; json: any }> {
  const res = await rolloutFetch(`${url}/rollout/task/${taskId}`);
  return { status: res.status, json: await res.json() };
}

/** Polls as the slime bridge does, until the task is no longer running. */
async function finished(url: string, taskId: string, timeoutMs = 90_000): Promise<TaskStatus> {
  const t0 = Date.now();
  for (;;) {
    const status = TaskStatus.parse((await get(url, taskId)).json);
    if (status.status !== "running" && status.status !== "cancelling") return status;
    if (Date.now() - t0 > timeoutMs) throw new Error(`task ${taskId} still ${status.status}`);
    await Bun.sleep(100);
  }
}

async function healthy(target: RolloutTarget): Promise<void> {
  const res = await fetch(`${target.url}/health`);
  expect(res.status).toBe(200);
}

/** A task outside the catalog: answers "Done." and is scored by the harness's exit. */
const inlineTask = (taskId: string, extra: Record<string, unknown> = {}) => ({
  task_id: taskId,
  instruction: "Say done.",
  agent: { harness: "mini" },
  evaluator: { strategy: "session_completed" },
  ...extra,
});

/**
 * The payload NVIDIA's slime bridge POSTs (slime_bridge/rollout.py `_submit_attempt`): the task
 * template rendered (timeout_seconds as the template's string), task_id from
 * "polar-slime-{rollout_id}-{sample.group_index}", num_samples = the group size, callback_url of
 * its listener, and `_attach_scheduler_metadata`'s integer group_id / policy_version / rollout_step.
 */
function slimeBridgePayload(groupId: number, callbackUrl: string) {
  return {
    timeout_seconds: "600",
    agent: { harness: "mini", model_name: "Qwen/Qwen3-8B", settings: { step_limit: 8 } },
    evaluator: { strategy: "session_completed" },
    builder: { strategy: "per_request" },
    task_id: `polar-slime-${groupId}-0`,
    instruction: "Say done.",
    num_samples: 2,
    callback_url: callbackUrl,
    metadata: { agent_timeout: 300.0, group_id: groupId, policy_version: 0, rollout_step: 3 },
  };
}

const bundledLine = (taskId: string): Record<string, unknown> =>
  readFileSync(BUNDLED_TASKS_FILE, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((row) => row.task_id === taskId)!;

let python: PythonCallbackListener;
beforeAll(async () => {
  python = await PythonCallbackListener.start();
});
afterAll(() => python?.stop());

for (const kind of ["node", "coordinator"] as TargetKind[]) {
  describe(`rollout API conformance: ${kind}`, () => {
    let target: RolloutTarget;
    beforeAll(async () => {
      target = await startTarget(kind);
    }, 60_000);
    afterAll(async () => {
      await target?.stop();
    }, 60_000);

    test(
      "a slime-bridge submission with integer metadata runs; metadata comes back exactly as sent; the Python listener reads the TaskResult whole",
      async () => {
        const payload = slimeBridgePayload(kind === "node" ? 0 : 1, python.url);
        const accepted = await submit(target.url, payload);
        expect(accepted).toEqual({ status: 200, json: { task_id: payload.task_id, status: "running" } });
        // A task id still running: Polar's 409.
        const again = await submit(target.url, payload);
        expect(again.status).toBe(409);
        expect(typeof again.json.detail).toBe("string");

        const done = await finished(target.url, payload.task_id);
        expect(done).toMatchObject({ status: "completed", total_sessions: 2, completed_sessions: 2 });
        for (const r of done.results) {
          expect(r.status).toBe("COMPLETED");
          expect(r.metadata.group_id).toBe(payload.metadata.group_id);
          expect(Number.isInteger(r.metadata.group_id)).toBe(true);
          expect(r.metadata).toMatchObject({ policy_version: 0, rollout_step: 3, agent_timeout: 300 });
        }
        await waitFor(() => python.records.some((c) => c.task_id === payload.task_id), "the callback", 30_000);
        const received = python.records.filter((c) => c.task_id === payload.task_id);
        expect(received).toEqual([{ task_id: payload.task_id, status: "completed", results: 2, group_id_types: ["int"], write_error: null }]);
      },
      T,
    );

    test(
      "a finished task id may be submitted again (as Polar's manager allows): the new run is what GET shows",
      async () => {
        const id = `again-${kind}`;
        expect((await submit(target.url, inlineTask(id, { num_samples: 2 }))).status).toBe(200);
        const first = await finished(target.url, id);
        expect(first.total_sessions).toBe(2);
        expect((await submit(target.url, inlineTask(id, { num_samples: 1 }))).status).toBe(200);
        const second = await finished(target.url, id);
        expect(second).toMatchObject({ status: "completed", total_sessions: 1, completed_sessions: 1 });
        expect(second.results[0]!.session_id).not.toBe(first.results[0]!.session_id);
      },
      T,
    );

    test(
      "every session ERROR still ends the task `completed` (Polar's word), each result echoing the task's metadata",
      async () => {
        const id = `all-error-${kind}`;
        const body = inlineTask(id, { num_samples: 2, runtime: { prepare: [{ type: "exec", command: "exit 3" }] }, metadata: { group_id: 9 } });
        expect((await submit(target.url, body)).status).toBe(200);
        const done = await finished(target.url, id);
        expect(done.status).toBe("completed");
        expect(done.results.map((r) => r.status)).toEqual(["ERROR", "ERROR"]);
        for (const r of done.results) expect(r.metadata.group_id).toBe(9);
      },
      T,
    );

    test(
      "a bundled task line sent as is: its relative upload source resolves against the task file",
      async () => {
        const line = bundledLine("js-leap-year-century");
        const accepted = await submit(target.url, { ...line, agent: { harness: "mini" }, num_samples: 1, metadata: { group_id: 4 } });
        expect(accepted.status).toBe(200);
        const done = await finished(target.url, "js-leap-year-century");
        expect(done.results[0]!.status).toBe("COMPLETED");
        expect(typeof done.results[0]!.metadata.reward).toBe("number");
      },
      T,
    );

    describe("refused at submit, in FastAPI's words", () => {
      const cases: [string, Record<string, unknown>, { type: string; loc: (string | number)[]; msg?: string }][] = [
        [
          "a string that is no integer",
          { ...inlineTask("x"), num_samples: "four" },
          { type: "int_parsing", loc: ["body", "num_samples"], msg: "Input should be a valid integer, unable to parse string as an integer" },
        ],
        ["an integer task id", { ...inlineTask("x"), task_id: 7 }, { type: "string_type", loc: ["body", "task_id"], msg: "Input should be a valid string" }],
        ["no agent", { task_id: "x", instruction: "i", evaluator: { strategy: "none" } }, { type: "missing", loc: ["body", "agent"], msg: "Field required" }],
        [
          "an agent that is no object",
          { ...inlineTask("x"), agent: 5 },
          { type: "model_type", loc: ["body", "agent"], msg: "Input should be a valid dictionary or instance of AgentSpec" },
        ],
        [
          "num_samples 0",
          { ...inlineTask("x"), num_samples: 0 },
          { type: "greater_than_equal", loc: ["body", "num_samples"], msg: "Input should be greater than or equal to 1" },
        ],
        [
          "num_samples 1e9",
          { ...inlineTask("x"), num_samples: 1e9 },
          { type: "less_than_equal", loc: ["body", "num_samples"], msg: "Input should be less than or equal to 4096" },
        ],
        [
          "early stop over num_samples (Polar's model validator: on the body)",
          { ...inlineTask("x"), num_samples: 2, early_stop_min_usable_sessions: 3 },
          { type: "value_error", loc: ["body"], msg: "Value error, early_stop_min_usable_sessions cannot exceed num_samples" },
        ],
        ["an unknown harness", { ...inlineTask("x"), agent: { harness: "copilot" } }, { type: "literal_error", loc: ["body", "agent", "harness"] }],
        ["an unknown evaluator", { ...inlineTask("x"), evaluator: { strategy: "vibes" } }, { type: "literal_error", loc: ["body", "evaluator", "strategy"] }],
        [
          "a task outside the catalog without an evaluator",
          { task_id: "not-in-catalog", instruction: "i", agent: { harness: "mini" } },
          { type: "missing", loc: ["body", "evaluator"] },
        ],
        ["a task id with a slash", { ...inlineTask("x"), task_id: "a/b" }, { type: "string_pattern_mismatch", loc: ["body", "task_id"] }],
        ["a 1 MB task id", { ...inlineTask("x"), task_id: "a".repeat(1_000_000) }, { type: "string_pattern_mismatch", loc: ["body", "task_id"] }],
        [
          "a missing upload source",
          { ...inlineTask("x"), runtime: { prepare: [{ type: "upload_dir", source: "/nonexistent/polar-repo", path: "/work" }] } },
          { type: "value_error", loc: ["body", "runtime", "prepare", 0, "source"] },
        ],
        [
          "a relative upload source outside any task file",
          { ...inlineTask("x"), runtime: { prepare: [{ type: "upload_dir", source: "repo", path: "/work" }] } },
          { type: "value_error", loc: ["body", "runtime", "prepare", 0, "source"] },
        ],
      ];
      for (const [name, body, expected] of cases) {
        test(
          name,
          async () => {
            const { status, json } = await submit(target.url, body);
            expect(status).toBe(422);
            expect(json.detail).toContainEqual(expect.objectContaining(expected));
            // Nothing of it was created.
            if (typeof body.task_id === "string" && body.task_id.length < 200 && /^[\w.-]+$/.test(body.task_id))
              expect((await get(target.url, body.task_id)).status).toBe(404);
          },
          30_000,
        );
      }

      test(
        "numeric strings are accepted as pydantic's lax mode does",
        async () => {
          const id = `lax-${kind}`;
          const { status } = await submit(target.url, inlineTask(id, { num_samples: "1", dispatch_priority: "5", timeout_seconds: " 90.5" }));
          expect(status).toBe(200);
          expect((await finished(target.url, id)).total_sessions).toBe(1);
        },
        T,
      );

      test("malformed JSON: json_invalid", async () => {
        const { status, json } = await submit(target.url, "{nope");
        expect(status).toBe(422);
        expect(json.detail[0]).toMatchObject({ type: "json_invalid", loc: ["body", 0], msg: "JSON decode error" });
      }, 30_000);

      test(
        "a body nested 100,000 deep is a 422 before any parsing; nothing is created and the service stays up",
        async () => {
          const deep = `{"task_id":"deep-${kind}","instruction":"i","agent":{"harness":"mini"},"evaluator":{"strategy":"none"},"metadata":{"x":${"[".repeat(100_000)}${"]".repeat(100_000)}}}`;
          const { status, json } = await submit(target.url, deep);
          expect(status).toBe(422);
          expect(json.detail[0]).toMatchObject({ type: "value_error", loc: ["body"] });
          expect((await get(target.url, `deep-${kind}`)).status).toBe(404);
          await healthy(target);
          // The id was never taken: the same task, shallow, is accepted.
          expect((await submit(target.url, inlineTask(`deep-${kind}`))).status).toBe(200);
          await finished(target.url, `deep-${kind}`);
        },
        T,
      );

      test("a 20 MB body is a 413 `{detail}`, and the service stays up", async () => {
        const big = JSON.stringify({ ...inlineTask(`big-${kind}`), metadata: { blob: "x".repeat(20 * 1024 * 1024) } });
        const res = await rolloutFetch(`${target.url}/rollout/task/submit`, { method: "POST", headers: { "content-type": "application/json" }, body: big });
        expect(res.status).toBe(413);
        expect(typeof ((await res.json()) as { detail: string }).detail).toBe("string");
        await healthy(target);
      }, 60_000);
    });

    test("unknown ids: GET and DELETE answer 404 `Task not found`; DELETE ?register_if_missing answers a cancelled TaskStatus and refuses a late submit", async () => {
      expect(await get(target.url, "never-seen")).toEqual({ status: 404, json: { detail: "Task not found" } });
      const del = await rolloutFetch(`${target.url}/rollout/task/never-seen`, { method: "DELETE" });
      expect([del.status, await del.json()]).toEqual([404, { detail: "Task not found" }]);
      const ghost = await rolloutFetch(`${target.url}/rollout/task/ghost-${kind}?register_if_missing=true`, { method: "DELETE" });
      expect(await ghost.json()).toEqual({
        task_id: `ghost-${kind}`,
        status: "cancelled",
        total_sessions: 0,
        completed_sessions: 0,
        results: [],
        result_paths: [],
      });
      const late = await submit(target.url, inlineTask(`ghost-${kind}`));
      expect(late.status).toBe(409);
      // As Polar's manager: the tombstone is not a task.
      expect((await get(target.url, `ghost-${kind}`)).status).toBe(404);
    }, 30_000);
  });

  describe(`rollout API conformance: ${kind}, sessions held at the engine`, () => {
    // One run slot, one LLM call per session, and the engine's 2nd and 4th calls never answer:
    // the first session of a task finishes, the second hangs until it is stopped.
    let target: RolloutTarget;
    beforeAll(async () => {
      target = await startTarget(kind, { engine: { hangCalls: [2, 4] }, node: { workers: { init: 1, run: 1, postrun: 1, ready_backlog: 1 } } });
    }, 60_000);
    afterAll(async () => {
      await target?.stop();
    }, 60_000);

    test(
      "DELETE waits and answers the whole TaskStatus `cancelled`, keeping only the session that had finished; no callback is posted",
      async () => {
        const id = `cancel-${kind}`;
        const before = python.records.length;
        expect((await submit(target.url, inlineTask(id, { num_samples: 2, callback_url: python.url, metadata: { group_id: 11 } }))).status).toBe(200);
        await waitFor(async () => (await get(target.url, id)).json.completed_sessions === 1, "the first session finished", 60_000);
        const res = await rolloutFetch(`${target.url}/rollout/task/${id}`, { method: "DELETE" });
        const cancelled = TaskStatus.parse(await res.json());
        expect(cancelled).toMatchObject({ task_id: id, status: "cancelled", total_sessions: 2, completed_sessions: 1 });
        expect(cancelled.results.map((r) => [r.status, r.metadata.group_id])).toEqual([["COMPLETED", 11]]);
        expect(TaskStatus.parse((await get(target.url, id)).json)).toEqual(cancelled);
        // DELETE of a finished task answers its status unchanged.
        expect(TaskStatus.parse(await (await rolloutFetch(`${target.url}/rollout/task/${id}`, { method: "DELETE" })).json())).toEqual(cancelled);
        await target.node.callbacksSettled();
        await Bun.sleep(500);
        expect(python.records.slice(before).filter((c) => c.task_id === id)).toEqual([]);
      },
      T,
    );

    test(
      "early stop: once one result is usable the straggler stops; the task ends `completed` with both sessions",
      async () => {
        const id = `early-${kind}`;
        expect((await submit(target.url, inlineTask(id, { num_samples: 2, early_stop_min_usable_sessions: 1 }))).status).toBe(200);
        const done = await finished(target.url, id);
        expect(done).toMatchObject({ status: "completed", total_sessions: 2, completed_sessions: 2 });
        expect(done.results.map((r) => r.status).sort()).toEqual(["COMPLETED", "ERROR"]);
      },
      T,
    );
  });
}

describe("rollout API conformance: coordinator, trainer groups stay apart", () => {
  let target: RolloutTarget;
  let trainer: TrainerClient;
  beforeAll(async () => {
    target = await startTarget("coordinator");
    trainer = new TrainerClient({ url: target.url, token: TOKENS.trainerToken, trainerId: "conformance", reconnectDelayMs: 100 });
    await trainer.ready();
  }, 60_000);
  afterAll(async () => {
    trainer?.close();
    await target?.stop();
  }, 60_000);

  test(
    "a trainer group is never shown by GET /rollout/task/{id}, and never replaces a rollout-API task's status",
    async () => {
      const results: unknown[] = [];
      const streamed = new TrainerClient({
        url: target.url,
        token: TOKENS.trainerToken,
        trainerId: "conformance-2",
        reconnectDelayMs: 100,
        onResult: (r) => void results.push(r),
      });
      await streamed.ready();
      try {
        const apiTask = await submit(target.url, inlineTask("shared-id", { num_samples: 1 }));
        expect(apiTask.status).toBe(200);
        const apiDone = await finished(target.url, "shared-id");
        await streamed.submit({
          task: { task_id: "shared-id", instruction: "Say done.", evaluator: { strategy: "session_completed" } },
          n: 2,
          agent: { harness: "mini" },
        });
        await streamed.submit({
          task: { task_id: "trainer-only", instruction: "Say done.", evaluator: { strategy: "session_completed" } },
          n: 1,
          agent: { harness: "mini" },
        });
        await waitFor(() => results.length === 3, "3 trainer results", 90_000);
        expect(TaskStatus.parse((await get(target.url, "shared-id")).json)).toEqual(apiDone);
        expect((await get(target.url, "trainer-only")).status).toBe(404);
        // Nor can the rollout API cancel it, or a submit collide with a running trainer group.
        expect((await rolloutFetch(`${target.url}/rollout/task/trainer-only`, { method: "DELETE" })).status).toBe(404);
      } finally {
        streamed.close();
      }
    },
    T,
  );
});

describe("node: finished tasks survive a restart", () => {
  test(
    "a clean stop and start on the same store: GET answers the finished task with its results",
    async () => {
      const first = await startTarget("node");
      const dir = first.dir;
      let second: RolloutTarget | undefined;
      try {
        expect((await submit(first.url, inlineTask("kept", { num_samples: 2, metadata: { group_id: 5 } }))).status).toBe(200);
        const done = await finished(first.url, "kept");
        await first.node.stop();
        await first.engine.stop();
        second = await startTarget("node", { dir });
        expect(TaskStatus.parse((await get(second.url, "kept")).json)).toEqual(done);
        // The same id, submitted again, is a new run; the earlier one is kept in the store.
        expect((await submit(second.url, inlineTask("kept"))).status).toBe(200);
        expect((await finished(second.url, "kept")).total_sessions).toBe(1);
      } finally {
        await second?.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    },
    T,
  );
});
