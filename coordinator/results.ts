// Why: what the coordinator reads out of a node's SessionResult — reward, usability, policy
// versions — and the GRPO advantages of a finished group, as pure functions.
import type { ReportedResult, ReportedResultHeader } from "../protocol/node-link.ts";
import { SessionResult, type RolloutTraceHeader } from "../protocol/rollout.ts";
import type { StreamedResult } from "../protocol/trainer-stream.ts";
import type { ResultRow } from "./store/repo.ts";
import { isUsableResult } from "../lib/rollout-api/task-status.ts";

/** A streamed result whose traces may lack their token arrays: they are in its blob when it has one (coordinator/packed-results.ts). */
export type StreamedHeader = Omit<StreamedResult, "traces"> & { traces: RolloutTraceHeader[] };

/** The session's reward: every trace carries the evaluation's reward; null when it has no trace. */
export function sessionReward(result: ReportedResultHeader): number | null {
  return result.trajectory.traces[0]?.reward ?? null;
}

/** A result that counts toward early stop: the one rule of both services (lib/rollout-api/task-status.ts). */
export function isUsable(result: SessionResult): boolean {
  return isUsableResult(result);
}

function policyVersionsOf(result: ReportedResultHeader): number[] {
  const versions = new Set<number>();
  for (const trace of result.trajectory.traces) {
    const stamped = trace.metadata.policy_versions;
    if (Array.isArray(stamped)) for (const v of stamped) if (typeof v === "number" && Number.isInteger(v)) versions.add(v);
  }
  return [...versions].sort((a, b) => a - b);
}

/** The numeric stage durations of a result's timing (SessionTiming, ms; the per-category maps left out). */
export function resultTiming(result: ReportedResultHeader): Record<string, number> {
  return Object.fromEntries(Object.entries(result.timing).filter((e): e is [string, number] => typeof e[1] === "number"));
}

export function streamedResult(args: {
  result: ReportedResultHeader;
  /** The rollout's terminal state: the session's status, or CANCELLED when the coordinator cancelled it. */
  status: StreamedResult["status"];
  groupId: string;
  rolloutId: string;
  policyVersionStarted: number;
  stale: boolean;
}): StreamedHeader {
  const { result } = args;
  return {
    result_id: args.rolloutId,
    group_id: args.groupId,
    rollout_id: args.rolloutId,
    status: args.status,
    reward: sessionReward(result),
    traces: result.trajectory.traces,
    policy_version_started: args.policyVersionStarted,
    policy_versions: policyVersionsOf(result),
    stale: args.stale,
    timing: resultTiming(result),
    node_id: result.node_id,
    error: result.error,
    metadata: result.metadata,
  };
}

/** A stored result as its trainer receives it. */
export function streamedFromRow(row: ResultRow): StreamedHeader {
  return streamedResult({
    result: row.session,
    status: row.status,
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
export function syntheticErrorResult(args: { sessionId: string; taskId: string; cause: string; metadata: SessionResult["metadata"] }): ReportedResult {
  return SessionResult.parse({
    session_id: args.sessionId,
    task_id: args.taskId,
    status: "ERROR",
    trajectory: { status: "ERROR", traces: [], error: args.cause },
    error: args.cause,
    metadata: args.metadata,
  });
}
