// Why: Gym calls `POST /aggregate_metrics` with every verify response of a run (stripped of
// `response` and `responses_create_params`) and logs the flat keys it gets back; the numbers a
// Polar user wants are the mean reward, the pass rate per task and how many rollouts failed and
// why, in Gym's key style (`mean/reward`, per-task rows keyed by `_ng_task_index`).
import type { GymAggregateMetrics } from "../../protocol/gym.ts";

/** A rollout passes when its reward reaches this (Polar's evaluators give 1 for a solved task). */
export const PASS_REWARD = 1;

interface Row {
  task: number;
  reward: number | null;
  masked: boolean;
  failure: string | null;
}

function rowOf(raw: Record<string, unknown>): Row {
  const task = typeof raw._ng_task_index === "number" ? raw._ng_task_index : 0;
  const reward = typeof raw.reward === "number" && Number.isFinite(raw.reward) ? raw.reward : null;
  const instance = raw.instance_config as { mask_sample?: unknown } | undefined;
  const masked = raw.mask_sample === true || instance?.mask_sample === true;
  const failure = typeof raw.failure_kind === "string" ? raw.failure_kind : null;
  return { task, reward, masked, failure };
}

function stats(rewards: readonly number[], prefix = ""): Record<string, number> {
  if (rewards.length === 0) return {};
  const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  const sorted = [...rewards].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  const variance = rewards.length > 1 ? rewards.reduce((n, r) => n + (r - mean) ** 2, 0) / (rewards.length - 1) : 0;
  return {
    [`mean/${prefix}reward`]: mean,
    [`max/${prefix}reward`]: sorted.at(-1)!,
    [`min/${prefix}reward`]: sorted[0]!,
    [`median/${prefix}reward`]: median,
    [`std/${prefix}reward`]: Math.sqrt(variance),
  };
}

function failureCounts(rows: readonly Row[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of rows) if (r.failure) counts[`failures/${r.failure}`] = (counts[`failures/${r.failure}`] ?? 0) + 1;
  return counts;
}

/** Over the rollouts with a real reward: masked ones (infrastructure failures) are no verdict on the task. */
function passRate(rows: readonly Row[]): number | undefined {
  const scored = rows.filter((r) => r.reward !== null && !r.masked);
  return scored.length === 0 ? undefined : scored.filter((r) => r.reward! >= PASS_REWARD).length / scored.length;
}

export function aggregateMetrics(verifyResponses: readonly Record<string, unknown>[]): GymAggregateMetrics {
  const rows = verifyResponses.map(rowOf);
  if (rows.length === 0) return { group_level_metrics: [], agent_metrics: {}, key_metrics: {} };
  const byTask = new Map<number, Row[]>();
  for (const r of rows) byTask.set(r.task, [...(byTask.get(r.task) ?? []), r]);

  const groups = [...byTask.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([task, group]) => {
      const rate = passRate(group);
      const group_: Record<string, number> = {
        _ng_task_index: task,
        num_rollouts: group.length,
        num_masked: group.filter((r) => r.masked).length,
        ...(rate === undefined ? {} : { pass_rate: rate }),
        ...stats(group.flatMap((r) => (r.reward === null ? [] : [r.reward]))),
        ...failureCounts(group),
      };
      return group_;
    });

  const rewards = rows.flatMap((r) => (r.reward === null ? [] : [r.reward]));
  const unmasked = rows.flatMap((r) => (r.reward === null || r.masked ? [] : [r.reward]));
  const taskRates = groups.flatMap((g) => (g.pass_rate === undefined ? [] : [g.pass_rate]));
  // pass@k over each task's k rollouts: the share of tasks solved at least once.
  const solvedTasks = groups.filter((g) => (g["max/reward"] ?? -Infinity) >= PASS_REWARD).length;
  const agent: Record<string, number> = {
    num_rollouts: rows.length,
    num_tasks: groups.length,
    num_masked: rows.filter((r) => r.masked).length,
    mask_rate: rows.filter((r) => r.masked).length / rows.length,
    ...stats(rewards),
    ...stats(unmasked, "unmasked_"),
    ...(taskRates.length > 0 ? { "pass@1": taskRates.reduce((a, b) => a + b, 0) / taskRates.length, "pass@k": solvedTasks / groups.length } : {}),
    ...failureCounts(rows),
  };
  const key: Record<string, number> = {};
  for (const name of ["mean/reward", "pass@1", "pass@k", "mask_rate"]) if (agent[name] !== undefined) key[name] = agent[name];
  return { group_level_metrics: groups, agent_metrics: agent, key_metrics: key };
}
