// Why: a GRPO group whose rewards are all equal has zero advantage everywhere — the trainer pays
// a forward and backward pass for no gradient (DAPO's "dynamic sampling" drops such groups and
// samples more). Here, as pure functions: how a finished group is judged flat (its measured
// reward std against the submit's `min_reward_std`) and what replaces it when the submit asked
// (`replace_flat`: the same task again, or the next task of its list, within a bound).
import type { TaskRequest } from "../protocol/rollout.ts";
import type { GroupEndStatus, InlineTask, REPLACEMENT_EXHAUSTED_REASONS } from "../protocol/trainer-stream.ts";
import type { z } from "zod";
import { requestForGroup, type GroupState } from "./groups.ts";

export type ExhaustedReason = (typeof REPLACEMENT_EXHAUSTED_REASONS)[number];

/**
 * Population standard deviation of the rewards that exist (null ones — cancelled, unscored — are
 * left out); null with fewer than two, since one reward has no spread to measure. Exactly 0 when
 * they are all equal, whatever floating point would make of the mean.
 */
export function rewardStd(rewards: readonly (number | null)[]): number | null {
  const scored = rewards.filter((r): r is number => r !== null);
  if (scored.length < 2) return null;
  if (scored.every((r) => r === scored[0])) return 0;
  const mean = scored.reduce((a, b) => a + b, 0) / scored.length;
  return Math.sqrt(scored.reduce((a, b) => a + (b - mean) ** 2, 0) / scored.length);
}

/** The rewards a group's `group` message carries: none for a cancelled member. */
export function groupRewards(group: GroupState): (number | null)[] {
  return [...group.outcomes.values()].map((o) => (o.status === "CANCELLED" ? null : o.reward));
}

export interface Judgement {
  rewardStd: number | null;
  /** Completed, its spread measured, and at or below the threshold. */
  flat: boolean;
  threshold: number;
}

/** A group that finished as `status`: a cancelled one is never flat (the trainer stopped it). */
export function judgeGroup(group: GroupState, status: GroupEndStatus): Judgement {
  const std = rewardStd(groupRewards(group));
  const threshold = group.sampling.minRewardStd ?? 0;
  return { rewardStd: std, flat: status === "completed" && std !== null && std <= threshold, threshold };
}

export type ReplacementPlan = { kind: "replace"; taskId: string; request: TaskRequest } | { kind: "exhausted"; reason: ExhaustedReason };

/**
 * What replaces a flat group: null when its submit did not ask. The chain of one submitted group
 * holds at most `max_replacements` replacements; `next_task` walks its list, one task per link.
 * `resolve` finds a task id in the coordinator's task file.
 */
export function planReplacement(group: GroupState, resolve: (taskId: string) => z.infer<typeof InlineTask> | undefined): ReplacementPlan | null {
  const spec = group.sampling.replaceFlat;
  if (!spec) return null;
  const index = group.sampling.replacementIndex;
  if (index >= spec.max_replacements) return { kind: "exhausted", reason: "max_replacements" };
  if (spec.source === "same_task") return { kind: "replace", taskId: group.taskId, request: group.request };
  const next = spec.tasks?.[index];
  if (next === undefined || !group.sampling.overlay) return { kind: "exhausted", reason: "no_more_tasks" };
  const task = typeof next === "string" ? resolve(next) : next;
  if (!task) return { kind: "exhausted", reason: "task_not_found" };
  return { kind: "replace", taskId: task.task_id, request: requestForGroup(group.sampling.overlay, task) };
}
