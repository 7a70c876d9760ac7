// Why: GRPO learns from tasks the policy solves sometimes, not always or never (FrogNano keeps
// its tasks near a 0.5 pass rate). The coordinator sees every group finish, across trainers and
// restarts, so it keeps a pass-rate estimate per task that a trainer can rank tasks by.
//
// The estimator: per task, decayed sums over its completed groups. When a group with s scored
// rollouts (p of them passes: reward ≥ 1, a full pass for Polar's evaluators) and reward sum r
// completes, W ← λW + s, P ← λP + p, R ← λR + r, with λ = 2^(−1/H): each group's weight halves
// with every H later groups of the same task (H = `passRateHalfLifeGroups`). pass_rate = P / W,
// mean_reward = R / W; W is the effective number of rollouts behind them. Decay counts groups,
// not time: a task sampled once an epoch keeps its estimate between epochs, and the result does
// not depend on the clock. Cancelled groups and groups with no scored rollout change nothing.
import type { TaskStat, TaskStatsAnswer, TaskStatsQuery } from "../protocol/task-stats.ts";

/** A rollout passes when its reward is at least this (Polar's evaluators reward a solved task 1). */
export const PASS_REWARD = 1;

export interface TaskStatsEntry {
  taskId: string;
  weight: number;
  passSum: number;
  rewardSum: number;
  groups: number;
  rollouts: number;
  flatGroups: number;
  updatedAt: number;
}

export class TaskStatsBook {
  private readonly byTask = new Map<string, TaskStatsEntry>();
  private readonly decay: number;

  constructor(readonly halfLifeGroups: number) {
    this.decay = 0.5 ** (1 / halfLifeGroups);
  }

  /** What the store holds (a restart). */
  load(entries: readonly TaskStatsEntry[]): void {
    for (const e of entries) this.byTask.set(e.taskId, { ...e });
  }

  get(taskId: string): Readonly<TaskStatsEntry> | undefined {
    return this.byTask.get(taskId);
  }

  get size(): number {
    return this.byTask.size;
  }

  /** A completed group's scored rewards; the entry as it now is (to store), or null when nothing was measured. */
  record(taskId: string, rewards: readonly number[], flat: boolean, now: number): TaskStatsEntry | null {
    if (rewards.length === 0) return null;
    const prev = this.byTask.get(taskId);
    const keep = this.decay;
    const passes = rewards.filter((r) => r >= PASS_REWARD).length;
    const next: TaskStatsEntry = {
      taskId,
      weight: (prev ? keep * prev.weight : 0) + rewards.length,
      passSum: (prev ? keep * prev.passSum : 0) + passes,
      rewardSum: (prev ? keep * prev.rewardSum : 0) + rewards.reduce((a, b) => a + b, 0),
      groups: (prev?.groups ?? 0) + 1,
      rollouts: (prev?.rollouts ?? 0) + rewards.length,
      flatGroups: (prev?.flatGroups ?? 0) + (flat ? 1 : 0),
      updatedAt: now,
    };
    this.byTask.set(taskId, next);
    return { ...next };
  }

  /** Measured tasks (ranked by distance to the target when one is given) and the ids not measured yet. */
  query(q: TaskStatsQuery, catalogIds: () => readonly string[]): TaskStatsAnswer {
    const target = q.target_pass_rate ?? null;
    const asked = q.task_ids ? [...new Set(q.task_ids)] : null;
    const measured = asked ? asked.flatMap((id) => this.byTask.get(id) ?? []) : [...this.byTask.values()];
    const tasks = measured.map((e) => statOf(e, target));
    tasks.sort(
      (a, b) => (target === null ? 0 : a.distance! - b.distance! || b.weight - a.weight) || (a.task_id < b.task_id ? -1 : a.task_id > b.task_id ? 1 : 0),
    );
    const unmeasured = (asked ?? catalogIds()).filter((id) => !this.byTask.has(id));
    return { target_pass_rate: target, half_life_groups: this.halfLifeGroups, tasks: tasks.slice(0, q.limit), unmeasured: unmeasured.slice(0, q.limit) };
  }
}

export function passRate(e: TaskStatsEntry): number {
  return Math.min(1, Math.max(0, e.passSum / e.weight));
}

function statOf(e: TaskStatsEntry, target: number | null): TaskStat {
  const rate = passRate(e);
  return {
    task_id: e.taskId,
    pass_rate: rate,
    mean_reward: e.rewardSum / e.weight,
    weight: e.weight,
    groups: e.groups,
    rollouts: e.rollouts,
    flat_groups: e.flatGroups,
    distance: target === null ? null : Math.abs(rate - target),
    updated_at: new Date(e.updatedAt).toISOString(),
  };
}
