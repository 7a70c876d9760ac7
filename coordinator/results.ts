// Why: what the coordinator reads out of a node's SessionResult — reward, usability, policy
// versions — and the GRPO advantages of a finished group, as pure functions.
import type { ReportedResult } from "../protocol/node-link.ts";
import type { StreamedResult } from "../protocol/trainer-stream.ts";
import type { ResultRow } from "./store/repo.ts";
import { isUsableResult } from "../lib/rollout-api/task-status.ts";

/** The session's reward: every trace carries the evaluation's reward; null when none does. */
export function sessionReward(result: ReportedResult): number | null {
  for (const trace of result.trajectory.traces) if (typeof trace.reward === "number") return trace.reward;
  return null;
}

/** A result that counts toward early stop: the one rule of both services (lib/rollout-api/task-status.ts). */
export function isUsable(result: ReportedResult): boolean {
  return isUsableResult(result);
}

function policyVersionsOf(result: ReportedResult): number[] {
  const fromMeta = (value: unknown) => (Array.isArray(value) ? value.filter((v): v is number => Number.isInteger(v)) : []);
  const versions = new Set<number>();
  for (const trace of result.trajectory.traces) for (const v of fromMeta((trace.metadata as { policy_versions?: unknown } | undefined)?.policy_versions)) versions.add(v);
  return [...versions].sort((a, b) => a - b);
}

/** The numeric stage durations of a result's timing (SessionTiming, ms). */
export function resultTiming(result: ReportedResult): Record<string, number> {
  return Object.fromEntries(Object.entries((result.timing as Record<string, unknown> | undefined) ?? {}).filter((e): e is [string, number] => typeof e[1] === "number"));
}

export function streamedResult(args: {
  result: ReportedResult;
  /** The session's status, or CANCELLED when the coordinator cancelled it. */
  status: StreamedResult["status"];
  groupId: string;
  rolloutId: string;
  policyVersionStarted: number;
  stale: boolean;
}): StreamedResult {
  const { result } = args;
  const timing = resultTiming(result);
  return {
    result_id: args.rolloutId,
    group_id: args.groupId,
    rollout_id: args.rolloutId,
    status: args.status,
    reward: sessionReward(result),
    traces: result.trajectory.traces as Record<string, unknown>[],
    policy_version_started: args.policyVersionStarted,
    policy_versions: policyVersionsOf(result),
    stale: args.stale,
    timing,
    node_id: typeof result.node_id === "string" ? result.node_id : null,
    error: typeof result.error === "string" ? result.error : null,
    metadata: (result.metadata as Record<string, unknown> | undefined) ?? {},
  };
}

/** A stored result as its trainer receives it. */
export function streamedFromRow(row: ResultRow): StreamedResult {
  return streamedResult({
    result: row.session as ReportedResult,
    status: row.status as StreamedResult["status"],
    groupId: row.groupId,
    rolloutId: row.rolloutId,
    policyVersionStarted: row.policyVersionStarted,
    stale: row.stale,
  });
}

/** Reward minus the group mean (over rollouts with a reward), divided by the std for `mean_std`. */
export function groupAdvantages(rewards: (number | null)[], mode: "none" | "mean" | "mean_std"): (number | null)[] {
  const scored = rewards.filter((r): r is number => r !== null);
  if (mode === "none" || scored.length === 0) return rewards.map(() => null);
  const mean = scored.reduce((a, b) => a + b, 0) / scored.length;
  const std = Math.sqrt(scored.reduce((a, b) => a + (b - mean) ** 2, 0) / scored.length);
  return rewards.map((r) => (r === null ? null : mode === "mean_std" ? (r - mean) / (std + 1e-6) : r - mean));
}

/** A masked ERROR SessionResult for a rollout that ended without one (node lost for good, early stop). */
export function syntheticErrorResult(args: { sessionId: string; taskId: string; cause: string; metadata: Record<string, unknown> }): ReportedResult {
  return {
    session_id: args.sessionId,
    task_id: args.taskId,
    status: "ERROR",
    trajectory: { status: "ERROR", traces: [], metadata: {}, error: args.cause },
    timing: {},
    node_id: null,
    error: args.cause,
    metadata: args.metadata,
  };
}
