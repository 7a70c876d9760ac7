import { describe, expect, test } from "bun:test";
import { GymFailureKind } from "../../protocol/gym.ts";
import { SessionResult } from "../../protocol/rollout.ts";
import { FAILURE_CAUSES } from "../pipeline/result.ts";
import { failureKindOf, outcomeOf } from "./outcome.ts";

const OPTIONS = { maskAgentTimeout: false, agentTimeoutSeconds: 60 };

function completed(metadata: Record<string, unknown>, trajectoryMetadata: Record<string, unknown> = {}) {
  return SessionResult.parse({
    session_id: "s",
    task_id: "t",
    status: "COMPLETED",
    trajectory: { status: "COMPLETED", traces: [], metadata: trajectoryMetadata },
    metadata,
  });
}

function failed(cause: string, status: "ERROR" | "TIMEOUT" = "ERROR") {
  return SessionResult.parse({
    session_id: "s",
    task_id: "t",
    status,
    error: `${cause}: it broke`,
    trajectory: { status, traces: [], metadata: { failure: { cause, message: "it broke", state: "INIT" } }, error: `${cause}: it broke` },
    metadata: { reward: 0, failure: { cause, message: "it broke" } },
  });
}

describe("Polar's results as Gym outcomes", () => {
  test("a scored rollout: the evaluation's reward, trainable, no failure", () => {
    const o = outcomeOf(completed({ reward: 1, evaluation: { strategy: "swe", status: "resolved", reward_given: true } }), OPTIONS);
    expect(o).toMatchObject({ reward: 1, maskSample: false, failureKind: null, failureClass: null, responseStatus: "completed", rewardGiven: true });
  });

  test("an agent timeout: reward 0, trainable unless mask_agent_timeout, never filed as a failure", () => {
    const result = completed(
      { reward: 0, evaluation: { skipped: "agent_timeout" }, agent: { exit_code: null, timed_out: false } },
      { training_filter: { reason: "agent_timeout", trainable: true, masked: false } },
    );
    expect(outcomeOf(result, OPTIONS)).toMatchObject({
      reward: 0,
      maskSample: false,
      failureKind: "agent_timeout",
      failureClass: null,
      responseStatus: "incomplete",
    });
    expect(outcomeOf(result, { ...OPTIONS, maskAgentTimeout: true }).maskSample).toBe(true);
  });

  test("an evaluation that gave no reward is a masked verifier_error", () => {
    const o = outcomeOf(
      completed({ reward: 0, evaluation: { strategy: "swe", status: "no_reward", reason: "tests could not run", reward_given: false } }),
      OPTIONS,
    );
    expect(o).toMatchObject({
      reward: 0,
      maskSample: true,
      failureKind: "verifier_error",
      failureReason: "tests could not run",
      failureClass: "verifier_error",
    });
  });

  test("infrastructure failures are masked, named and filed; a stopped node's are not stored", () => {
    const sandbox = outcomeOf(failed("sandbox_start"), OPTIONS);
    expect(sandbox).toMatchObject({
      reward: 0,
      maskSample: true,
      failureKind: "provider_unavailable",
      failureReason: "it broke",
      failureClass: "provider_unavailable",
      noPersist: false,
      responseStatus: "failed",
    });
    expect(outcomeOf(failed("task_timeout", "TIMEOUT"), OPTIONS).failureKind).toBe("polar:task_timeout");
    expect(outcomeOf(failed("shutdown"), OPTIONS)).toMatchObject({ failureKind: "shutdown", noPersist: true });
    expect(outcomeOf(failed("node_restarted"), OPTIONS)).toMatchObject({ failureKind: "polar:node_restarted", noPersist: true });
  });

  test("every failure cause Polar has gets a name Gym's vocabulary accepts", () => {
    for (const cause of FAILURE_CAUSES) expect(GymFailureKind.safeParse(failureKindOf(cause)).success).toBe(true);
    expect(failureKindOf("Weird Cause!")).toBe("polar:weird_cause_");
  });
});
