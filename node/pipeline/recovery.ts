// Why: a node killed mid-rollout must never drop work silently; on start it removes the
// sandboxes of its earlier life and ends every unfinished rollout as a masked ERROR ("node
// restarted"), stored like any other result. A standalone task reports that ERROR as its
// session's result. A coordinator's assignment does not: the restart (or a shutdown) cut off
// this node's attempt, not the rollout, so the link reports it as interrupted and the
// coordinator queues the rollout again with the attempt counted (interruptionCause).
import { z } from "zod";
import { SessionResult } from "../../protocol/rollout.ts";
import type { FailureCause } from "./result.ts";
import type { RolloutsRepo } from "../store/rollouts-repo.ts";
import { isRolloutState } from "./states.ts";

export interface RecoveryReport {
  sandboxesRemoved: number;
  rolloutsFailed: number;
}

export async function recoverUnfinished(repo: RolloutsRepo, nodeId: string, removeLeftovers: () => Promise<number>): Promise<RecoveryReport> {
  const sandboxesRemoved = await removeLeftovers();
  const unfinished = await repo.unfinishedRollouts();
  for (const row of unfinished) {
    const events = await repo.events(row.id);
    const seq = (events.at(-1)?.seq ?? 0) + 1;
    const state = isRolloutState(row.state) ? row.state : "QUEUED";
    // A result stored just before the crash stands; only its terminal event was lost.
    const stored = await repo.result(row.id);
    if (stored) {
      const result = SessionResult.parse(stored);
      await repo.recordTransition(row.id, seq, state, result.status, new Date().toISOString(), { recovered: true });
      continue;
    }
    // The task's metadata is echoed as in every result, so a trainer can place it in its group.
    const taskMetadata = (await repo.task(row.taskId))?.request.metadata;
    const message = `the node restarted while the rollout was ${state}`;
    const error = `node_restarted: ${message}`;
    const filter = { masked: true, reason: "session_error" };
    const result = SessionResult.parse({
      session_id: row.id,
      task_id: row.taskId,
      status: "ERROR",
      trajectory: { status: "ERROR", traces: [], metadata: { training_filter: filter, failure: { cause: "node_restarted", message, state } }, error },
      node_id: nodeId,
      error,
      metadata: {
        ...(isRecord(taskMetadata) ? taskMetadata : {}),
        sample_index: row.sampleIndex,
        reward: 0,
        failure: { cause: "node_restarted", message },
        ...(row.gatewaySessionId ? { gateway_session_id: row.gatewaySessionId } : {}),
      },
    });
    await repo.saveResult(row.id, row.taskId, "ERROR", result);
    await repo.recordTransition(row.id, seq, state, "ERROR", new Date().toISOString(), { cause: "node_restarted" });
  }
  return { sandboxesRemoved, rolloutsFailed: unfinished.length };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Failures that end this node's attempt without saying anything about the rollout itself. */
const INTERRUPTIONS: readonly FailureCause[] = ["node_restarted", "shutdown"];

/** The failure a masked result's trajectory metadata names (maskedResult writes it). */
const NamedFailure = z.object({ failure: z.object({ cause: z.string() }) });

/** The cause when a stored result only records that this node stopped (restart, shutdown); else null. */
export function interruptionCause(result: Pick<SessionResult, "status" | "trajectory">): FailureCause | null {
  if (result.status !== "ERROR") return null;
  const named = NamedFailure.safeParse(result.trajectory.metadata);
  return named.success ? (INTERRUPTIONS.find((c) => c === named.data.failure.cause) ?? null) : null;
}
