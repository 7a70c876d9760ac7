// Why: an operator reads what the cluster did from the coordinator's log — nodes joining,
// reconnecting, leaving and lost, rollouts requeued, restores, pauses, policy versions — one
// JSON line per event (ids and counts, never task contents), written by a listener on the
// coordinator's events to a sink tests can read back.
import type { EventBus } from "../lib/events.ts";
import { type LogSink, writeLogLine } from "../lib/json-log.ts";
import type { CoordinatorEvents } from "./events.ts";

export function logCoordinatorEvents(events: EventBus<CoordinatorEvents>, sink: LogSink): void {
  const at = (ms: number) => new Date(ms).toISOString();
  events.on("node.joined", (e) =>
    writeLogLine(sink, "info", e.reconnect ? "node.reconnected" : "node.joined", {
      node_id: e.node_id,
      version: e.version,
      slots: e.slots,
      harnesses: e.harnesses,
      kept: e.kept,
      released: e.released,
      at: at(e.at),
    }),
  );
  events.on("node.state_changed", (e) => {
    if (e.to === "disconnected" || e.to === "draining")
      writeLogLine(sink, e.to === "disconnected" ? "warn" : "info", `node.${e.to}`, { node_id: e.node_id, from: e.from, cause: e.cause, at: at(e.at) });
  });
  events.on("peer.refused", (e) => writeLogLine(sink, "warn", "peer.refused", { kind: e.kind, id: e.id, reason: e.reason, at: at(e.at) }));
  events.on("node.lost", (e) => writeLogLine(sink, "warn", "node.lost", { node_id: e.node_id, rollouts: e.rollout_ids.length, at: at(e.at) }));
  events.on("rollout.requeued", (e) =>
    writeLogLine(sink, "warn", "rollouts.requeued", {
      node_id: e.node_id,
      cause: e.cause,
      rollouts: e.rollout_ids.length,
      rollout_ids: e.rollout_ids.slice(0, 20),
      at: at(e.at),
    }),
  );
  events.on("rollout.attempts_exhausted", (e) => writeLogLine(sink, "warn", "rollout.attempts_exhausted", { ...e, at: at(e.at) }));
  events.on("store.write_failed", (e) => writeLogLine(sink, "error", "store.write_failed", { code: e.code, description: e.description, at: at(e.at) }));
  events.on("store.writable_again", (e) => writeLogLine(sink, "info", "store.writable_again", { after: e.description, retries: e.retries, at: at(e.at) }));
  events.on("coordinator.restored", (e) => writeLogLine(sink, "info", "coordinator.restored", { ...e, at: at(e.at) }));
  events.on("cluster.pause_requested", (e) =>
    writeLogLine(sink, "info", "cluster.pause_requested", { request_id: e.request_id, nodes: e.nodes, at: at(e.at) }),
  );
  events.on("cluster.paused", (e) => writeLogLine(sink, "info", "cluster.paused", { request_id: e.request_id, nodes: e.nodes, at: at(e.at) }));
  events.on("cluster.resumed", (e) => writeLogLine(sink, "info", "cluster.resumed", { policy_version: e.policy_version, at: at(e.at) }));
  events.on("policy.version_advanced", (e) =>
    writeLogLine(sink, "info", "policy.version_advanced", { from: e.from, to: e.to, stale_cancelled: e.stale_cancelled, at: at(e.at) }),
  );
}
