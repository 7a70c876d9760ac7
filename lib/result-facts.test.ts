import { expect, test } from "bun:test";
import { resultFacts } from "./result-facts.ts";

const trace = (reward: number) => ({ prompt_ids: [1, 2, 3], response_ids: [4, 5], loss_mask: [1, 0], response_logprobs: [-0.1, 0], reward });
const completed = (extra: Record<string, unknown> = {}, stats: Record<string, unknown> = {}) => ({
  status: "COMPLETED",
  trajectory: {
    status: "COMPLETED",
    traces: [trace(1)],
    metadata: {
      trajectory_stats: {
        call_count: 1,
        trace_count: 1,
        trainable_tokens: 1,
        trainable_exactly_sampled: 1,
        split_counts: { "tool-args-drift": 2 },
        normalisations: {},
        context_drift_tokens: 3,
        ...stats,
      },
    },
  },
  metadata: { reward: 1, ...extra },
});
const masked = (cause: string, state: string, status = "ERROR") => ({
  status,
  trajectory: { status, traces: [], metadata: { training_filter: { masked: true, reason: "session_error" }, failure: { cause, message: "x", state } } },
  metadata: { reward: 0, failure: { cause, message: "x" } },
});

test("a scored rollout: no failure, its reward, tokens and drift by cause", () => {
  const f = resultFacts(completed());
  expect(f).toMatchObject({
    failure_kind: "none",
    reward: 1,
    masked: false,
    tokens: { prompt: 3, response: 2, trainable: 1 },
    splits: { "tool-args-drift": 2 },
    context_drift_tokens: 3,
    unfaithful_tokens: 0,
  });
});

test("failure kinds: infrastructure, agent, evaluation, capture, cancelled; a masked result has no reward", () => {
  expect(resultFacts(masked("sandbox_start", "INIT"))).toMatchObject({ failure_kind: "infrastructure", reward: null, masked: true, cause: "sandbox_start" });
  expect(resultFacts(masked("evaluator", "POSTRUN")).failure_kind).toBe("evaluation");
  expect(resultFacts(masked("trajectory_build", "POSTRUN")).failure_kind).toBe("capture");
  expect(resultFacts(masked("cancelled", "RUN")).failure_kind).toBe("cancelled");
  expect(resultFacts(masked("task_timeout", "RUN", "TIMEOUT")).failure_kind).toBe("agent");
  expect(resultFacts(masked("task_timeout", "POSTRUN", "TIMEOUT")).failure_kind).toBe("evaluation");
  expect(resultFacts(masked("task_timeout", "INIT", "TIMEOUT")).failure_kind).toBe("infrastructure");
  expect(resultFacts(completed({ agent: { exit_code: 0, timed_out: true, error: null } })).failure_kind).toBe("agent");
  expect(resultFacts(completed({}, { trainable_tokens: 10, trainable_exactly_sampled: 7 }))).toMatchObject({ failure_kind: "capture", unfaithful_tokens: 3 });
  expect(resultFacts(completed({}, { call_count: 2, trace_count: 0 })).failure_kind).toBe("capture");
  expect(resultFacts({ status: "CANCELLED" }).failure_kind).toBe("cancelled");
});

test("untrusted input: anything malformed counts as absent", () => {
  expect(resultFacts(null)).toMatchObject({ status: "ERROR", failure_kind: "infrastructure", reward: null, tokens: { prompt: 0, response: 0, trainable: 0 } });
  expect(resultFacts({ status: "COMPLETED", trajectory: { traces: "no" }, metadata: { reward: "1" } })).toMatchObject({ failure_kind: "none", reward: null });
});
