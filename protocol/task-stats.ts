// Why: the coordinator keeps a pass-rate estimate per task (coordinator/task-stats.ts) so a
// trainer can pick tasks near a target rate — where GRPO groups have signal. Trainers ask over
// their stream (`task_stats`), operators over `GET /v1/admin/tasks`; both get these shapes.
import { z } from "zod";

/** Which tasks to list, and the pass rate they are ranked against. */
export const TaskStatsQuery = z.object({
  /** Only these tasks (each measured one is listed; the others come back in `unmeasured`). Default: every measured task. */
  task_ids: z.array(z.string().min(1)).min(1).max(10_000).optional(),
  /** Rank by |pass_rate − target|, nearest first; without it, by task id. */
  target_pass_rate: z.number().min(0).max(1).optional(),
  /** At most this many tasks (and this many unmeasured ids). */
  limit: z.number().int().min(1).max(10_000).default(100),
});
export type TaskStatsQuery = z.infer<typeof TaskStatsQuery>;
export type TaskStatsQueryInput = z.input<typeof TaskStatsQuery>;

/** One task's estimate: decayed over its recent completed groups (docs/coordinator.md, "Pass rates"). */
export const TaskStat = z.object({
  task_id: z.string(),
  /** Share of its recent scored rollouts with reward ≥ 1 (a full pass), each group's weight halving every `half_life_groups` later groups. */
  pass_rate: z.number().min(0).max(1),
  /** The same decayed mean over the rewards themselves. */
  mean_reward: z.number(),
  /** Effective number of rollouts behind the estimate (decayed count): how much to trust it. */
  weight: z.number().nonnegative(),
  /** Completed groups, scored rollouts and flat groups counted over the task's whole history (not decayed). */
  groups: z.number().int().nonnegative(),
  rollouts: z.number().int().nonnegative(),
  flat_groups: z.number().int().nonnegative(),
  /** |pass_rate − target_pass_rate|; null when the query named no target. */
  distance: z.number().nonnegative().nullable(),
  updated_at: z.string(),
});
export type TaskStat = z.infer<typeof TaskStat>;

/** The answer to a TaskStatsQuery (`GET /v1/admin/tasks`; the trainer stream's `task_stats` adds its request id). */
export const TaskStatsAnswer = z.object({
  target_pass_rate: z.number().nullable(),
  /** The estimator's half-life, in completed groups of a task (coordinator `--pass-rate-half-life`). */
  half_life_groups: z.number().positive(),
  tasks: z.array(TaskStat),
  /** Task ids asked for — or, without `task_ids`, ids of the coordinator's task file — that no completed group has measured yet. */
  unmeasured: z.array(z.string()),
});
export type TaskStatsAnswer = z.infer<typeof TaskStatsAnswer>;
