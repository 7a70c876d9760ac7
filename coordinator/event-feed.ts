// Why: the coordinator's `GET /events` feed is its typed events in NVIDIA Polar's vocabulary —
// task.created / task.updated / task.completed for groups, session.state_changed for rollouts
// (upstream's fields: task_id, session_id, status) — plus Polar's own (nodes joining and lost,
// requeues, pause and resume, policy versions, accepted results with their facts, heartbeats),
// so tools built for upstream's feed work and the dashboard has one live source.
import { EventFeed, type EventFeedOptions } from "../lib/event-feed.ts";
import type { Coordinator } from "./coordinator.ts";
import type { CoordinatorEventName, CoordinatorEvents } from "./events.ts";
import type { RolloutStateName } from "./rollout-states.ts";
import type { NodeRolloutState } from "../protocol/node-link.ts";

/** Upstream's SessionStatus words for the coordinator's rollout states (its terminal ones are upstream's own). */
const STATE_STATUS: Record<RolloutStateName, string> = {
  QUEUED: "QUEUED",
  ASSIGNED: "REGISTERED",
  COMPLETED: "COMPLETED",
  ERROR: "ERROR",
  TIMEOUT: "TIMEOUT",
  CANCELLED: "CANCELLED",
};

/** Upstream's SessionStatus words for the node states the coordinator passes on (a node's terminal one is announced by the coordinator's own state change). */
const STAGE_STATUS: Partial<Record<NodeRolloutState, string>> = { INIT: "INITIALIZING", READY: "READY", RUN: "RUNNING", POSTRUN: "POST_RUN" };

/** Groups whose task id the feed remembers after they finished. */
const TASK_IDS_KEPT = 10_000;

/** Polar's own events, passed on under their own names. */
const PASSED_ON = [
  "group.deleted",
  "group.flat",
  "group.replaced",
  "group.replacements_exhausted",
  "rollout.requeued",
  "rollout.attempts_exhausted",
  "result.accepted",
  "result.dropped",
  "result.delivered",
  "node.state_changed",
  "node.joined",
  "node.lost",
  "node.heartbeat",
  "cluster.pause_requested",
  "cluster.paused",
  "cluster.resumed",
  "policy.version_advanced",
  "coordinator.restored",
] as const satisfies readonly CoordinatorEventName[];

export function coordinatorEventFeed(coordinator: Coordinator, options: EventFeedOptions = {}): EventFeed {
  const feed = new EventFeed(options);
  const ev = coordinator.events;
  /** Group → task id, also after the group left the running set. */
  const taskOf = new Map<string, string>();
  const taskIdOf = (groupId: string) => coordinator.groups.get(groupId)?.taskId ?? taskOf.get(groupId) ?? null;

  ev.on("group.created", (e) => {
    taskOf.set(e.group_id, e.task_id);
    // Results of a finished group still arrive after its task.completed: forget only the oldest.
    if (taskOf.size > TASK_IDS_KEPT) taskOf.delete(taskOf.keys().next().value!);
    const agent = coordinator.groups.get(e.group_id)?.request.agent;
    feed.publish("task.created", {
      task_id: e.task_id,
      status: "running",
      harness: agent?.harness ?? null,
      model: agent?.model_name ?? null,
      num_samples: e.n,
      group_id: e.group_id,
      trainer_id: e.trainer_id,
      priority: e.priority,
      image: e.image,
      session_ids: e.rollout_ids,
    });
  });
  ev.on("group.progressed", (e) => {
    feed.publish("task.updated", {
      task_id: e.task_id,
      completed_sessions: e.finished,
      total_sessions: e.n,
      usable_sessions: e.usable,
      group_id: e.group_id,
      trainer_id: e.trainer_id,
    });
  });
  ev.on("group.finished", (e) => {
    feed.publish("task.completed", {
      task_id: e.task_id,
      status: e.status,
      completed_sessions: e.n,
      usable_sessions: e.usable,
      group_id: e.group_id,
      trainer_id: e.trainer_id,
    });
  });
  ev.on("rollout.state_changed", (e) => {
    feed.publish("session.state_changed", {
      task_id: taskIdOf(e.group_id),
      session_id: e.rollout_id,
      status: STATE_STATUS[e.to],
      state: e.to,
      from: e.from,
      group_id: e.group_id,
      node_id: e.node_id,
      attempt: e.attempt,
      cause: e.cause,
      ...(e.in_state_ms !== undefined && { in_state_ms: e.in_state_ms }),
    });
  });
  ev.on("rollout.stage_changed", (e) => {
    const status = STAGE_STATUS[e.stage];
    if (!status) return;
    feed.publish("session.state_changed", {
      task_id: taskIdOf(e.group_id),
      session_id: e.rollout_id,
      status,
      state: "ASSIGNED",
      stage: e.stage,
      group_id: e.group_id,
      node_id: e.node_id,
      attempt: e.attempt,
    });
  });
  for (const name of PASSED_ON) {
    ev.on(name, (e: CoordinatorEvents[typeof name]) => {
      const { at: _at, ...data } = e as CoordinatorEvents[typeof name] & { at?: number };
      feed.publish(name, name === "result.accepted" ? { ...data, task_id: taskIdOf((e as CoordinatorEvents["result.accepted"]).group_id) } : data);
    });
  }
  return feed;
}
