// Why: a coordinator's rollout runs on a node under the node's own ids — one rollout, and one task,
// per attempt, so a reassignment never collides with an earlier run — and its result goes back
// under the coordinator's. Both directions are here, the one place that translates them.
import type { Assignment, ReportedResult } from "../protocol/node-link.ts";
import type { SessionResult } from "../protocol/rollout.ts";
import type { Transcript } from "../lib/transcript.ts";
import type { AssignmentRow } from "./store/assignments-repo.ts";

/** The node's ids for an assignment: its rollout and the task it is stored under. */
export function localIds(a: Pick<Assignment, "rollout_id" | "attempt">): { rolloutId: string; taskId: string } {
  const rolloutId = `${a.rollout_id}.${a.attempt}`;
  return { rolloutId, taskId: `coordinator:${rolloutId}` };
}

/** The node's stored result as the coordinator knows the rollout: its rollout id and task id, with the transcript if any. */
export function reportedResult(
  result: SessionResult,
  assignment: Pick<AssignmentRow, "coordinatorRolloutId" | "taskId">,
  transcript: Transcript | null,
): ReportedResult {
  return { ...result, session_id: assignment.coordinatorRolloutId, task_id: assignment.taskId, ...(transcript && { polar_transcript: transcript }) };
}
