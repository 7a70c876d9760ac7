// Why: the node's `GET /events` — its typed events in NVIDIA Polar's vocabulary (task.created /
// task.updated / task.completed for rollout-API tasks, session.state_changed with upstream's
// SessionStatus words for every pipeline move) plus Polar's own (the coordinator link, pauses,
// gateway calls), in upstream's frame shape (lib/event-feed.ts).
import { EventFeed, type EventFeedOptions } from "../../lib/event-feed.ts";
import type { EventBus } from "../../lib/events.ts";
import type { NodeEvents } from "../events.ts";

/** Upstream's SessionStatus words for the pipeline's states. */
export const NODE_SESSION_STATUS: Record<string, string> = {
  QUEUED: "REGISTERED",
  INIT: "INITIALIZING",
  READY: "READY",
  RUN: "RUNNING",
  POSTRUN: "POST_RUN",
  COMPLETED: "COMPLETED",
  ERROR: "ERROR",
  TIMEOUT: "TIMEOUT",
  CANCELLED: "CANCELLED",
};

const PASSED_ON = [
  "coordinator.connected",
  "coordinator.disconnected",
  "assignment.started",
  "assignment.cancelled",
  "assignment.interrupted",
  "result.reported",
  "result.acked",
  "gateway.paused",
  "gateway.resumed",
  "gateway.call",
] as const satisfies readonly (keyof NodeEvents)[];

export function nodeEventFeed(events: EventBus<NodeEvents>, options: EventFeedOptions = {}): EventFeed {
  const feed = new EventFeed(options);
  events.on("task.submitted", (e) => {
    feed.publish("task.created", {
      task_id: e.task_id,
      status: "running",
      harness: e.harness,
      model: e.model,
      num_samples: e.num_samples,
      session_ids: e.session_ids,
    });
    // Upstream registers each session before it starts.
    for (const id of e.session_ids)
      feed.publish("session.state_changed", { task_id: e.task_id, session_id: id, status: "REGISTERED", state: "QUEUED", from: null });
  });
  events.on("task.progressed", (e) =>
    feed.publish("task.updated", { task_id: e.task_id, completed_sessions: e.completed_sessions, total_sessions: e.total_sessions }),
  );
  events.on("task.finished", (e) => feed.publish("task.completed", { task_id: e.task_id, status: e.status, completed_sessions: e.completed_sessions }));
  events.on("rollout.state_changed", (e) =>
    feed.publish("session.state_changed", {
      task_id: e.task_id,
      session_id: e.rollout_id,
      status: NODE_SESSION_STATUS[e.to] ?? e.to,
      state: e.to,
      from: e.from,
      sample_index: e.sample_index,
      elapsed_ms: e.elapsed_ms,
      stage_ms: e.stage_ms,
    }),
  );
  for (const name of PASSED_ON) {
    events.on(name, (e: NodeEvents[typeof name]) => {
      const { at: _at, ...data } = e as NodeEvents[typeof name] & { at?: number };
      feed.publish(name, data);
    });
  }
  return feed;
}
