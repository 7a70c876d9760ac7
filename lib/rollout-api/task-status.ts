// Why: the node and the coordinator answer the same TaskStatus for the same story, so the words
// and the counting are decided once, as Polar's RolloutManager decides them: a task is
// `completed` once every session ended, whatever each session's status; `cancelling` → `cancelled`
// after a DELETE, keeping only the sessions that had finished before it; `failed` only when the
// service itself could not run the task. And one rule says which result counts toward early stop.
import type { SessionResult, TaskStatus, TaskStatusWord } from "../../protocol/rollout.ts";

/** Where a task is in its life, as the service holding it knows it. */
export type TaskPhase = "running" | "cancelling" | "cancelled" | "failed";

/**
 * The TaskStatus of a task with `total` sessions whose finished ones are `results` (for a
 * cancelled task: the ones that finished before the cancel).
 */
export function taskStatus(taskId: string, phase: TaskPhase, total: number, results: SessionResult[]): TaskStatus {
  const word: TaskStatusWord = phase === "running" ? (results.length >= total ? "completed" : "running") : phase;
  return { task_id: taskId, status: word, total_sessions: total, completed_sessions: results.length, results, result_paths: [] };
}

/** The status of a task id cancelled before it was submitted (`register_if_missing`). */
export function cancelledBeforeSubmit(taskId: string): TaskStatus {
  return { task_id: taskId, status: "cancelled", total_sessions: 0, completed_sessions: 0, results: [], result_paths: [] };
}

/** How long such an id stays refused: Polar's cancel tombstone TTL. */
export const CANCELLED_ID_MEMORY_MS = 300_000;

/**
 * Polar's usable result (early stop counts these): the session COMPLETED and one of its traces has
 * a prompt, a response and at least one trainable token. Masked infrastructure failures and
 * timeouts never count; an agent timeout that stayed trainable does.
 */
export function isUsableResult(result: Pick<SessionResult, "status" | "trajectory">): boolean {
  if (result.status !== "COMPLETED") return false;
  return result.trajectory.traces.some((t) => t.prompt_ids.length > 0 && t.response_ids.length > 0 && t.loss_mask.includes(1));
}
