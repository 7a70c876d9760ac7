// Why: how a rollout's outcome becomes Polar's SessionResult — token-faithful traces with the
// reward on each, masked results for infrastructure failures, trainable agent timeouts — in one
// place, so every stage reports failures the same way.
import { describeStoreError, isStoreError } from "../../lib/store-errors.ts";
import { SessionResult, SessionTiming, type RolloutTrace, type SessionResultStatus, type TaskRequest, type TrainingFilter } from "../../protocol/rollout.ts";
import type { Trace, TrajectoryResult } from "../../protocol/trace.ts";
import type { Rollout } from "./rollout.ts";

/** What went wrong, named: the stage's part that failed, or why the rollout was stopped. */
export const FAILURE_CAUSES = [
  "sandbox_start",
  "prepare",
  "gateway_session",
  "harness_start",
  "engine_unreachable",
  "evaluator",
  "evaluation_invalid",
  "trajectory_build",
  "task_timeout",
  "cancelled",
  "early_stop",
  "node_restarted",
  "shutdown",
  /** The assignment names a harness or builder strategy this node does not know: it never ran. */
  "assignment_refused",
  /** The node's store refused a write (a full disk: SQLITE_FULL); the rollout's work cannot be kept. */
  "store",
  "internal",
] as const;
export type FailureCause = (typeof FAILURE_CAUSES)[number];

/**
 * `err` as a failure of `cause` — a store error always as `store`, worded by its SQLite code and
 * message only (drizzle's own message carries the query's parameters: a result's token arrays).
 */
export function asRolloutFailure(err: unknown, cause: FailureCause): RolloutFailure {
  if (err instanceof RolloutFailure) return err;
  if (isStoreError(err)) {
    const { code, message } = describeStoreError(err);
    return new RolloutFailure("store", `the node's store refused a write: ${code}: ${message}`);
  }
  return new RolloutFailure(cause, err instanceof Error ? err.message : String(err));
}

/** A failure of the rollout's infrastructure (never the agent's own outcome). */
export class RolloutFailure extends Error {
  constructor(
    readonly failureCause: FailureCause,
    message: string,
    /** The evaluation detail of an `evaluation_invalid` failure (status invalid, its evaluation_error). */
    readonly evaluation?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "RolloutFailure";
  }
}

/** Runs `work`, naming any failure `cause` (a failure already named keeps its own cause). */
export async function named<T>(cause: FailureCause, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw asRolloutFailure(err, cause);
  }
}

/** Converts one rebuilt trace to Polar's shape: logprobs finite, 0.0 wherever nothing trains. */
export function toPolarTrace(trace: Trace, reward: number, masked: boolean, extra: Record<string, unknown>): RolloutTrace {
  const lossMask = masked ? trace.loss_mask.map(() => 0 as const) : trace.loss_mask;
  return {
    prompt_ids: trace.prompt_ids,
    response_ids: trace.response_ids,
    loss_mask: lossMask,
    response_logprobs: trace.logprobs.map((lp, i) => (lossMask[i] === 1 && lp !== null && Number.isFinite(lp) ? lp : 0)),
    finish_reason: trace.finish_reason,
    reward,
    metadata: { strategy: trace.strategy, calls: trace.calls, policy_versions: trace.policy_versions, stats: trace.stats, ...extra },
  };
}

/** Polar's timing from a rollout's marks and measured stage parts. */
export function timingOf(rollout: Rollout): SessionTiming {
  const m = rollout.marks;
  const span = (from?: number, to?: number) => (from !== undefined && to !== undefined ? Math.max(0, to - from) : 0);
  const done = m.done ?? performance.now();
  return SessionTiming.parse({
    ...rollout.timing,
    register_to_init_queue_ms: 0,
    init_ms: span(m.init, m.ready),
    ready_queue_ms: span(m.ready, m.run),
    run_ms: span(m.run, m.postrunQueued),
    postrun_queue_ms: span(m.postrunQueued, m.postrun),
    postrun_ms: span(m.postrun, done),
    e2e_ms: span(m.queued, done),
    rollout_pipeline_e2e_ms: span(m.queued, done),
  });
}

function baseMetadata(rollout: Rollout, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    ...rollout.request.metadata,
    sample_index: rollout.sampleIndex,
    harness: rollout.harness,
    builder_strategy: rollout.strategy,
    ...(rollout.session ? { gateway_session_id: rollout.session.id } : {}),
    ...(rollout.outcome ? { agent: { exit_code: rollout.outcome.exit_code, timed_out: rollout.outcome.timed_out, error: rollout.outcome.error ?? null } } : {}),
    ...extra,
  };
}

export interface ScoredOutcome {
  trajectory: TrajectoryResult;
  reward: number;
  evaluation: Record<string, unknown> | null;
}

/** A rollout that ran to the end (including an agent timeout, which stays trainable with reward 0). */
export function completedResult(rollout: Rollout, nodeId: string, scored: ScoredOutcome): SessionResult {
  const agentTimeout = rollout.agentTimedOut === true;
  const filter: TrainingFilter | undefined = agentTimeout ? { reason: "agent_timeout", trainable: true, masked: false } : undefined;
  const traceExtra = filter ? { training_filter: filter } : {};
  return SessionResult.parse({
    session_id: rollout.id,
    task_id: rollout.taskId,
    status: "COMPLETED",
    trajectory: {
      status: "COMPLETED",
      traces: scored.trajectory.traces.map((t) => toPolarTrace(t, scored.reward, false, traceExtra)),
      metadata: {
        trajectory_stats: scored.trajectory.stats,
        ...(agentTimeout ? { agent_result: { status: "timeout", timeout_source: "agent" }, training_filter: filter } : {}),
      },
      error: null,
    },
    timing: timingOf(rollout),
    node_id: nodeId,
    error: null,
    metadata: baseMetadata(rollout, { reward: scored.reward, evaluation: scored.evaluation }),
  });
}

/**
 * A masked result (loss mask all 0, reward 0 on the traces) naming what failed; traces from the
 * calls recorded so far, if any. An invalid evaluation has no reward in the result's metadata at
 * all (it was not measured) and names its cause in the training filter and the evaluation detail.
 */
export function maskedResult(rollout: Rollout, nodeId: string, failure: RolloutFailure, partial: TrajectoryResult | null): SessionResult {
  const status: SessionResultStatus = failure.failureCause === "task_timeout" ? "TIMEOUT" : "ERROR";
  const invalid = failure.failureCause === "evaluation_invalid";
  const filter: TrainingFilter = {
    masked: true,
    reason: status === "TIMEOUT" ? "session_timeout" : "session_error",
    ...(invalid ? { cause: "evaluation_invalid", evaluation_error: failure.evaluation?.evaluation_error ?? null } : {}),
  };
  const error = `${failure.failureCause}: ${failure.message}`;
  return SessionResult.parse({
    session_id: rollout.id,
    task_id: rollout.taskId,
    status,
    trajectory: {
      status,
      traces: (partial?.traces ?? []).map((t) => toPolarTrace(t, 0, true, { training_filter: filter })),
      metadata: { training_filter: filter, failure: { cause: failure.failureCause, message: failure.message, state: rollout.state } },
      error,
    },
    timing: timingOf(rollout),
    node_id: nodeId,
    error,
    metadata: baseMetadata(rollout, {
      ...(invalid ? { evaluation: failure.evaluation ?? null } : { reward: 0 }),
      failure: { cause: failure.failureCause, message: failure.message },
    }),
  });
}

/** A masked ERROR for a rollout refused before it started (its assignment names what this node cannot run). */
export function refusedResult(args: { rolloutId: string; taskId: string; request: TaskRequest; nodeId: string; message: string }): SessionResult {
  const cause: FailureCause = "assignment_refused";
  const filter: TrainingFilter = { masked: true, reason: "session_error" };
  const error = `${cause}: ${args.message}`;
  return SessionResult.parse({
    session_id: args.rolloutId,
    task_id: args.taskId,
    status: "ERROR",
    trajectory: { status: "ERROR", traces: [], metadata: { training_filter: filter, failure: { cause, message: args.message, state: "QUEUED" } }, error },
    node_id: args.nodeId,
    error,
    metadata: { ...args.request.metadata, sample_index: 0, reward: 0, failure: { cause, message: args.message } },
  });
}
