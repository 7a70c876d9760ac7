import { describe, expect, test } from "bun:test";
import { RolloutTrace, SessionResult, SessionTiming, TaskRequest } from "./rollout.ts";

const trajectory = { status: "COMPLETED" as const, traces: [], metadata: {}, error: null };

describe("Polar's result models", () => {
  test("SessionTiming fills every Polar field with 0 and forbids unknown keys", () => {
    const timing = SessionTiming.parse({ init_ms: 12 });
    expect(timing.init_ms).toBe(12);
    expect(timing.e2e_ms).toBe(0);
    expect(SessionTiming.safeParse({ init_ms: 1, queue_wait_ms: 3 }).success).toBe(false);
  });

  test("a trace has one finite logprob per response token and 0.0 where the mask is 0", () => {
    const ok = { prompt_ids: [1], response_ids: [2, 3], loss_mask: [1, 0], response_logprobs: [-0.5, 0], finish_reason: "stop", reward: 1 };
    expect(RolloutTrace.parse(ok).metadata).toEqual({});
    expect(RolloutTrace.safeParse({ ...ok, response_logprobs: [-0.5, -1] }).success).toBe(false);
    expect(RolloutTrace.safeParse({ ...ok, response_logprobs: [-0.5] }).success).toBe(false);
    expect(RolloutTrace.safeParse({ ...ok, response_logprobs: [Number.NaN, 0] }).success).toBe(false);
  });

  test("a trace's per-token arrays hold integer ids, a 0/1 mask and finite logprobs, each refused by its field", () => {
    const ok = { prompt_ids: [1], response_ids: [2, 3], loss_mask: [1, 0], response_logprobs: [-0.5, 0], finish_reason: "stop", reward: 1 };
    const refused = (bad: object) => RolloutTrace.safeParse({ ...ok, ...bad }).error?.issues.map((i) => [i.path.join("."), i.message]);
    expect(refused({ prompt_ids: [1.5] })).toEqual([["prompt_ids", "expected an array of integers"]]);
    expect(refused({ response_ids: ["2", 3] })).toEqual([["response_ids", "expected an array of integers"]]);
    expect(refused({ loss_mask: [1, 2] })).toEqual([["loss_mask", "expected an array of 0s and 1s"]]);
    expect(refused({ response_logprobs: [-0.5, Number.POSITIVE_INFINITY] })).toEqual([["response_logprobs", "expected an array of finite numbers"]]);
    expect(refused({ prompt_ids: "1" })).toEqual([["prompt_ids", "expected an array of integers"]]);
  });

  test("a session result's status must equal its trajectory's", () => {
    const base = { session_id: "s", task_id: "t", status: "COMPLETED", trajectory };
    const parsed = SessionResult.parse(base);
    expect(parsed.timing.run_ms).toBe(0);
    expect(parsed.node_id).toBeNull();
    const bad = SessionResult.safeParse({ ...base, status: "ERROR" });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(["status"]);
  });

  test("early_stop_min_usable_sessions may not exceed num_samples", () => {
    const r = TaskRequest.safeParse({ task_id: "t", instruction: "x", agent: { harness: "mini" }, num_samples: 2, early_stop_min_usable_sessions: 3 });
    expect(r.success).toBe(false);
    // Polar's model validator: the error is on the whole request.
    expect(r.error?.issues[0]?.path).toEqual([]);
  });
});
