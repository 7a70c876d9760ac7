import { expect, test } from "bun:test";
import { GymAggregateMetrics } from "../../protocol/gym.ts";
import { aggregateMetrics } from "./metrics.ts";

const row = (task: number, rollout: number, reward: number, extra: Record<string, unknown> = {}) => ({
  _ng_task_index: task,
  _ng_rollout_index: rollout,
  reward,
  mask_sample: false,
  failure_kind: null,
  response: { usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } },
  ...extra,
});

test("mean reward, pass rate per task over real rewards, masked rollouts and failure counts", () => {
  const metrics = GymAggregateMetrics.parse(
    aggregateMetrics([
      row(0, 0, 1),
      row(0, 1, 0),
      row(0, 2, 1),
      row(0, 3, 0, { mask_sample: true, instance_config: { mask_sample: true }, failure_kind: "polar:prepare" }),
      row(1, 0, 0),
      row(1, 1, 0, { failure_kind: "agent_timeout" }),
    ]),
  );
  expect(metrics.group_level_metrics).toHaveLength(2);
  const [t0, t1] = metrics.group_level_metrics as Record<string, number>[];
  // Task 0: the masked rollout is no verdict on the task: 2 passes of 3.
  expect(t0).toMatchObject({ _ng_task_index: 0, num_rollouts: 4, num_masked: 1, "mean/reward": 0.5, "failures/polar:prepare": 1 });
  expect(t0!.pass_rate).toBeCloseTo(2 / 3, 12);
  expect(t1).toMatchObject({ _ng_task_index: 1, num_rollouts: 2, pass_rate: 0, "failures/agent_timeout": 1 });
  expect(metrics.agent_metrics).toMatchObject({
    num_rollouts: 6,
    num_tasks: 2,
    num_masked: 1,
    "failures/polar:prepare": 1,
    "failures/agent_timeout": 1,
    "pass@k": 0.5,
  });
  expect(metrics.agent_metrics["mean/reward"]).toBeCloseTo(2 / 6, 12);
  expect(metrics.agent_metrics["mean/unmasked_reward"]).toBeCloseTo(2 / 5, 12);
  expect(metrics.agent_metrics["pass@1"]).toBeCloseTo((2 / 3 + 0) / 2, 12);
  expect(metrics.agent_metrics.mask_rate).toBeCloseTo(1 / 6, 12);
  expect(Object.keys(metrics.key_metrics).sort()).toEqual(["mask_rate", "mean/reward", "pass@1", "pass@k"]);
});

test("no verify responses: empty metrics, as Gym's own aggregation answers", () => {
  expect(aggregateMetrics([])).toEqual({ group_level_metrics: [], agent_metrics: {}, key_metrics: {} });
});

test("a row without a numeric reward counts as a rollout but not in reward statistics", () => {
  const metrics = aggregateMetrics([row(0, 0, 1), { _ng_task_index: 0, _ng_rollout_index: 1 }]);
  expect(metrics.agent_metrics).toMatchObject({ num_rollouts: 2, "mean/reward": 1 });
});
