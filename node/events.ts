// Why: what a node does is announced as typed events (name → payload, snake_case, built from
// protocol types) so counters, logs and later /metrics, SSE and a dashboard observe it without
// reaching into the pipeline or the coordinator link. Rollout events come from the pipeline's
// own transition listeners; link events from the link. Emitting is guarded (lib/events.ts).
import { EventBus, type ListenerErrorSink } from "../lib/events.ts";
import type { SessionResult, SessionResultStatus } from "../protocol/rollout.ts";
import type { Rollout, RolloutMarks, RolloutTransitions } from "./pipeline/rollout.ts";
import type { RolloutState } from "./pipeline/states.ts";
import type { CommittedCall } from "./gateway/call-path.ts";
import { resultFacts, type ResultFacts } from "../lib/result-facts.ts";

export interface NodeEvents {
  /** A rollout moved (NVIDIA's session.state_changed), with the durations of the stages it passed. */
  "rollout.state_changed": {
    rollout_id: string;
    task_id: string;
    sample_index: number;
    from: RolloutState;
    to: RolloutState;
    /** Epoch ms. */
    at: number;
    /** Since it was queued on this node. */
    elapsed_ms: number;
    /** Stages passed so far (SessionTiming names: init_ms, ready_queue_ms, run_ms, postrun_queue_ms, postrun_ms). */
    stage_ms: Record<string, number>;
  };
  /** A rollout's result was stored (`reward` null when it is masked: nothing was measured). */
  "rollout.finished": {
    rollout_id: string;
    task_id: string;
    status: SessionResultStatus;
    reward: number | null;
    masked: boolean;
    timing: SessionResult["timing"];
    facts: ResultFacts;
    at: number;
  };
  /** A rollout-API task was stored with its sessions (NVIDIA's task.created). */
  "task.submitted": { task_id: string; harness: string; model: string | null; num_samples: number; session_ids: string[]; at: number };
  /** A session of a task got its result (NVIDIA's task.updated). */
  "task.progressed": { task_id: string; completed_sessions: number; total_sessions: number; at: number };
  /** Every session of a task has a result (NVIDIA's task.completed). */
  "task.finished": { task_id: string; status: string; completed_sessions: number; at: number };
  /** An LLM call went through the gateway and was recorded (failures too). */
  "gateway.call": CommittedCall & { at: number };
  /** The link to the coordinator completed its handshake / went away. */
  "coordinator.connected": { url: string; node_id: string; at: number };
  "coordinator.disconnected": { url: string; at: number };
  /** The coordinator assigned a rollout; it runs here as `rollout_id`. */
  "assignment.started": { rollout_id: string; coordinator_rollout_id: string; attempt: number; group_id: string; at: number };
  "assignment.cancelled": { coordinator_rollout_id: string; attempt: number; reason: string; at: number };
  /** A result was sent to the coordinator (again, until acknowledged). */
  "result.reported": { coordinator_rollout_id: string; attempt: number; status: SessionResultStatus; at: number };
  "result.acked": { coordinator_rollout_id: string; attempt: number; at: number };
  /** An assignment this node's restart cut off, reported so the coordinator queues it again. */
  "assignment.interrupted": { coordinator_rollout_id: string; attempt: number; cause: string; at: number };
  "gateway.paused": { request_id: string; policy_version: number; at: number };
  "gateway.resumed": { policy_version: number; at: number };
}

export function newNodeEvents(onListenerError?: ListenerErrorSink): EventBus<NodeEvents> {
  return new EventBus<NodeEvents>(onListenerError);
}

/** Stage durations a rollout's marks give so far (only stages it has left). */
export function stageDurations(m: RolloutMarks): Record<string, number> {
  const out: Record<string, number> = {};
  const span = (key: string, from?: number, to?: number) => {
    if (from !== undefined && to !== undefined) out[key] = Math.max(0, to - from);
  };
  span("init_ms", m.init, m.ready);
  span("ready_queue_ms", m.ready, m.run);
  span("run_ms", m.run, m.postrunQueued);
  span("postrun_queue_ms", m.postrunQueued, m.postrun);
  span("postrun_ms", m.postrun, m.done);
  return out;
}

/** Announces every pipeline transition on `events` (through the pipeline's own listeners). */
export function announceTransitions(transitions: RolloutTransitions, events: EventBus<NodeEvents>): () => void {
  return transitions.onTransition((r: Rollout, from: RolloutState) => {
    if (!events.has("rollout.state_changed")) return;
    events.emit("rollout.state_changed", {
      rollout_id: r.id,
      task_id: r.taskId,
      sample_index: r.sampleIndex,
      from,
      to: r.state,
      at: Date.now(),
      elapsed_ms: Math.max(0, performance.now() - r.marks.queued),
      stage_ms: stageDurations(r.marks),
    });
  });
}

/** Announces a stored result. */
export function announceResult(events: EventBus<NodeEvents>, result: SessionResult): void {
  const masked = (result.trajectory.metadata.training_filter as { masked?: unknown } | undefined)?.masked === true;
  // A masked result's 0 is no measured reward.
  const reward = !masked && typeof result.metadata.reward === "number" ? result.metadata.reward : null;
  events.emit("rollout.finished", {
    rollout_id: result.session_id,
    task_id: result.task_id,
    status: result.status,
    reward,
    masked,
    timing: result.timing,
    facts: resultFacts(result),
    at: Date.now(),
  });
}
