import { describe, expect, test } from "bun:test";
import { groupAdvantages, isUsable, sessionReward, streamedResult } from "./results.ts";
import { SessionResult } from "../protocol/rollout.ts";

const result = (status: SessionResult["status"], reward: number, masked = false): SessionResult =>
  SessionResult.parse({
    session_id: "s",
    task_id: "t",
    status,
    trajectory: {
      status,
      traces: [
        {
          prompt_ids: [1],
          response_ids: [2],
          loss_mask: [masked ? 0 : 1],
          response_logprobs: [masked ? 0 : -0.5],
          finish_reason: "stop",
          reward,
          metadata: { training_filter: { masked }, policy_versions: [2, 1] },
        },
      ],
    },
    timing: { init_ms: 5, runtime_exec_ms_by_category: { shell: 3 } },
  });

describe("results", () => {
  test("reward, usability and policy versions come from the traces", () => {
    expect(sessionReward(result("COMPLETED", 1))).toBe(1);
    expect(sessionReward({ ...result("COMPLETED", 1), trajectory: { ...result("COMPLETED", 1).trajectory, traces: [] } })).toBeNull();
    expect(isUsable(result("COMPLETED", 0))).toBe(true);
    // Polar's usable rule: COMPLETED with a trainable token (a masked TIMEOUT never counts).
    expect(isUsable(result("TIMEOUT", 0))).toBe(false);
    expect(isUsable(result("ERROR", 0))).toBe(false);
    expect(isUsable(result("COMPLETED", 0, true))).toBe(false);
    const streamed = streamedResult({
      result: result("COMPLETED", 1),
      status: "COMPLETED",
      groupId: "g",
      rolloutId: "r",
      policyVersionStarted: 1,
      stale: false,
    });
    expect(streamed.policy_versions).toEqual([1, 2]);
    // Only the numeric durations: the per-category maps stay in the stored session.
    expect(streamed.timing.init_ms).toBe(5);
    expect(streamed.timing).not.toHaveProperty("runtime_exec_ms_by_category");
    expect(streamed.traces).toEqual(result("COMPLETED", 1).trajectory.traces);
  });

  test("GRPO advantages: mean-centred, optionally std-normalised, null without reward", () => {
    expect(groupAdvantages([1, 0, 1, 0], "mean")).toEqual([0.5, -0.5, 0.5, -0.5]);
    const normed = groupAdvantages([1, 0, null], "mean_std");
    expect(normed[0]).toBeCloseTo(1, 4);
    expect(normed[1]).toBeCloseTo(-1, 4);
    expect(normed[2]).toBeNull();
    expect(groupAdvantages([1, 1], "mean_std")).toEqual([0, 0]);
    expect(groupAdvantages([1, 0], "none")).toEqual([null, null]);
  });
});
