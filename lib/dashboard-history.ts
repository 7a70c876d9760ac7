// Why: the dashboard opens with the recent past — finished rollouts, finished groups, each
// recent rollout's steps — then follows `/events`. Each service feeds this bounded memory from its
// own typed events (recent only: it never grows past its limits, and a restart starts it empty;
// the store and /metrics are the long view).
import type { DashboardGroup, DashboardResult } from "../protocol/admin.ts";

export interface HistoryLimits {
  results?: number;
  groups?: number;
  /** Rollouts whose timeline is kept. */
  timelines?: number;
}

export interface TimelineEntry {
  at: number;
  state: string;
  node_id: string | null;
}

export class DashboardHistory {
  private readonly resultList: DashboardResult[] = [];
  private readonly groupList: DashboardGroup[] = [];
  private readonly steps = new Map<string, TimelineEntry[]>();
  /** Measured rewards of each group's results so far (until the group is summarised). */
  private readonly rewardsOf = new Map<string, number[]>();
  private readonly maxResults: number;
  private readonly maxGroups: number;
  private readonly maxTimelines: number;

  constructor(limits: HistoryLimits = {}) {
    this.maxResults = limits.results ?? 5000;
    this.maxGroups = limits.groups ?? 1000;
    this.maxTimelines = limits.timelines ?? 5000;
  }

  addResult(result: DashboardResult): void {
    this.resultList.push(result);
    if (this.resultList.length > this.maxResults) this.resultList.splice(0, this.resultList.length - this.maxResults);
    if (result.group_id !== null && result.reward !== null) {
      const list = this.rewardsOf.get(result.group_id) ?? [];
      list.push(result.reward);
      this.rewardsOf.set(result.group_id, list);
      if (this.rewardsOf.size > this.maxGroups * 4) this.rewardsOf.delete(this.rewardsOf.keys().next().value!);
    }
  }

  /** Summarises a finished group from the rewards its results brought. */
  groupFinished(args: { group_id: string; task_id: string; status: string; n: number; policy_version: number; at: number }): DashboardGroup {
    const rewards = this.rewardsOf.get(args.group_id) ?? [];
    this.rewardsOf.delete(args.group_id);
    const mean = rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : null;
    const std = mean === null ? null : Math.sqrt(rewards.reduce((a, b) => a + (b - mean) ** 2, 0) / rewards.length);
    const group: DashboardGroup = { ...args, rewards, mean_reward: mean, reward_std: std };
    this.groupList.push(group);
    if (this.groupList.length > this.maxGroups) this.groupList.splice(0, this.groupList.length - this.maxGroups);
    return group;
  }

  step(rolloutId: string, entry: TimelineEntry): void {
    let list = this.steps.get(rolloutId);
    if (!list) {
      this.steps.set(rolloutId, (list = []));
      if (this.steps.size > this.maxTimelines) this.steps.delete(this.steps.keys().next().value!);
    }
    list.push(entry);
  }

  timeline(rolloutId: string): TimelineEntry[] {
    return this.steps.get(rolloutId) ?? [];
  }

  get results(): readonly DashboardResult[] {
    return this.resultList;
  }

  get groups(): readonly DashboardGroup[] {
    return this.groupList;
  }
}

/** SessionTiming (ms) → stage seconds, under the stage names the dashboard and /metrics use. */
export const STAGE_OF_TIMING: Record<string, string> = {
  init_ms: "init",
  ready_queue_ms: "ready_queue",
  run_ms: "run",
  postrun_queue_ms: "postrun_queue",
  postrun_ms: "postrun",
  container_start_ms: "sandbox_start",
  prepare_ms: "prepare",
  agent_exec_ms: "agent_exec",
  build_ms: "build",
  eval_ms: "eval",
  e2e_ms: "e2e",
};

export function stageSeconds(timing: Record<string, unknown> | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, stage] of Object.entries(STAGE_OF_TIMING)) {
    const ms = timing?.[key];
    if (typeof ms === "number" && Number.isFinite(ms) && ms > 0) out[stage] = ms / 1000;
  }
  return out;
}

/** The node's pipeline stages laid end to end from a SessionTiming (ms since queued on the node). */
export function stageSpans(timing: Record<string, unknown> | undefined): { stage: string; start_ms: number; duration_ms: number }[] {
  const order = ["init_ms", "ready_queue_ms", "run_ms", "postrun_queue_ms", "postrun_ms"];
  const spans: { stage: string; start_ms: number; duration_ms: number }[] = [];
  let t = 0;
  for (const key of order) {
    const ms = timing?.[key];
    if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) continue;
    spans.push({ stage: STAGE_OF_TIMING[key]!, start_ms: t, duration_ms: ms });
    t += ms;
  }
  // Parts measured inside a stage: sandbox start within init, agent within run, build/eval within postrun.
  const within: [string, string, number][] = [
    ["container_start_ms", "sandbox_start", spans.find((s) => s.stage === "init")?.start_ms ?? 0],
    ["agent_exec_ms", "agent_exec", spans.find((s) => s.stage === "run")?.start_ms ?? 0],
    ["eval_ms", "eval", spans.find((s) => s.stage === "postrun")?.start_ms ?? 0],
  ];
  for (const [key, stage, start] of within) {
    const ms = timing?.[key];
    if (typeof ms === "number" && Number.isFinite(ms) && ms > 0) spans.push({ stage, start_ms: start, duration_ms: ms });
  }
  return spans;
}
