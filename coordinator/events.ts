// Why: everything the coordinator decides is announced as one of these typed events (name →
// payload, snake_case like the wire, ids and numbers rather than live objects), so counters,
// logs and later /metrics, SSE and a dashboard observe the cluster without reaching into it.
// Events describe decisions as they are made; the store write of a decision follows in the
// coordinator's ordered write chain. NVIDIA's event names map onto these: task.created ←
// group.created, task.updated ← group.progressed, task.completed ← group.finished,
// session.state_changed ← rollout.state_changed.
import type { ResultFacts } from "../lib/result-facts.ts";
import type { GroupEndStatus } from "../protocol/trainer-stream.ts";
import type { StreamedHeader } from "./results.ts";
import type { ExhaustedReason } from "./dynamic-sampling.ts";
import type { GatewayLatency, NodeRolloutState, StageCapacity, StageLoad } from "../protocol/node-link.ts";
import type { NodeStateName } from "./node-states.ts";
import type { RolloutStateName } from "./rollout-states.ts";

export interface CoordinatorEvents {
  /** A group was accepted (stored with its rollouts, about to be queued). */
  "group.created": {
    group_id: string;
    task_id: string;
    trainer_id: string | null;
    n: number;
    priority: number;
    image: string;
    rollout_ids: string[];
    at: number;
  };
  /** A member of a group got its result. */
  "group.progressed": { group_id: string; task_id: string; trainer_id: string | null; finished: number; usable: number; n: number; at: number };
  /** Every member has a result (trainer `group` message, rollout API callback). */
  "group.finished": {
    group_id: string;
    task_id: string;
    trainer_id: string | null;
    status: GroupEndStatus;
    n: number;
    usable: number;
    callback_url: string | null;
    at: number;
  };
  /** An operator deleted a group and everything of it. */
  "group.deleted": { group_id: string; at: number };
  /** A completed group's reward std was at or below its `min_reward_std` (0 unless the submit set one): no GRPO signal. */
  "group.flat": {
    group_id: string;
    task_id: string;
    trainer_id: string | null;
    reward_std: number;
    min_reward_std: number;
    replacement_index: number;
    at: number;
  };
  /** A fresh group was started in place of a flat one (`replace_flat`); `replacement_index` is the new group's place in its chain. */
  "group.replaced": { group_id: string; replacement_group_id: string; task_id: string; trainer_id: string | null; replacement_index: number; at: number };
  /** A flat group asked for a replacement and got none: the chain's bound was reached or no task was left. */
  "group.replacements_exhausted": {
    group_id: string;
    task_id: string;
    trainer_id: string | null;
    root_group_id: string;
    replacement_index: number;
    max_replacements: number;
    reason: ExhaustedReason;
    at: number;
  };
  /** A completed group moved its task's pass-rate estimate (coordinator/task-stats.ts). */
  "task.stats_updated": { task_id: string; pass_rate: number; mean_reward: number; weight: number; groups: number; at: number };

  /** A rollout moved between states (from null: it entered the book — submitted, or reloaded after a restart). */
  "rollout.state_changed": {
    rollout_id: string;
    group_id: string;
    from: RolloutStateName | null;
    to: RolloutStateName;
    /** The node it went to (assigned) or left (queued again, ended). */
    node_id: string | null;
    attempt: number;
    /** The node-side state last reported. */
    stage: NodeRolloutState | null;
    cause: string | null;
    at: number;
    /** Time spent in `from`. */
    in_state_ms?: number;
    /** On a result: the node's stage durations (SessionTiming, ms). */
    timing?: Record<string, number>;
  };
  /** The node running a rollout reported a new state of its run (INIT, READY, RUN, POSTRUN…). */
  "rollout.stage_changed": { rollout_id: string; group_id: string; node_id: string | null; attempt: number; stage: NodeRolloutState; at: number };
  /** Assignments sent to a node. */
  "rollout.dispatched": { rollout_id: string; group_id: string; node_id: string; attempt: number; policy_version: number; at: number };
  /** Rollouts put back in the queue, with the attempt they had. */
  "rollout.requeued": { rollout_ids: string[]; node_id: string; cause: string; at: number };
  /** A rollout lost its node on its last allowed attempt: it ends with a masked ERROR result. */
  "rollout.attempts_exhausted": { rollout_id: string; group_id: string; node_id: string; attempt: number; cause: string; at: number };

  /** A node's result was stored for the rollout's current attempt. */
  "result.accepted": {
    rollout_id: string;
    group_id: string;
    node_id: string;
    attempt: number;
    status: StreamedHeader["status"];
    reward: number | null;
    timing: Record<string, number>;
    /** Failure kind, tokens and capture fidelity read from the result (lib/result-facts.ts). */
    facts: ResultFacts;
    at: number;
  };
  /** A node's result for an attempt that is no longer current (reassigned, cancelled, repeated). */
  "result.dropped": { rollout_id: string; node_id: string; attempt: number; at: number };
  /** A stored result is ready for its trainer's stream. */
  /** `traces`: the result's trace blob (coordinator/packed-results.ts); null when `result.traces` are whole. */
  "result.ready": { trainer_id: string; result: StreamedHeader; traces: Uint8Array | null };
  /** A result frame went to a trainer. */
  "result.delivered": { result_id: string; trainer_id: string; bytes: number; at: number };
  /** A trainer acknowledged results. */
  "result.acked": { trainer_id: string; result_ids: string[]; at: number };

  /** A node connection moved between states (from null: first heard of). */
  "node.state_changed": { node_id: string; from: NodeStateName | null; to: NodeStateName; cause: string; at: number };
  /** A node completed its handshake, first time or again. */
  "node.joined": {
    node_id: string;
    reconnect: boolean;
    version: string;
    capacity: StageCapacity;
    slots: number;
    harnesses: string[];
    engines: string[];
    images_warm: string[];
    /** Rollouts it still held that stay its own. */
    kept: number;
    /** Rollouts it no longer held or reported interrupted (queued again or failed). */
    released: number;
    at: number;
  };
  /** A node's or trainer's hello was refused: its identity was not proven, or its id is connected already. */
  "peer.refused": { kind: "node" | "trainer"; id: string; reason: string; at: number };
  /** A node's grace ran out: its rollouts move on. */
  "node.lost": { node_id: string; rollout_ids: string[]; at: number };
  "node.heartbeat": {
    node_id: string;
    load: StageLoad;
    images_warm: string[];
    /** Ready sandboxes per image. */ warm_sandboxes: Record<string, number>;
    gateway: GatewayLatency | null;
    assigned: number;
    slots: number;
    at: number;
  };

  /** A trainer asked the cluster to pause (weight sync); `nodes` were sent `pause`. */
  "cluster.pause_requested": { request_id: string; nodes: number; at: number };
  /** Every node asked has drained its in-flight LLM calls (or gone). */
  "cluster.paused": { request_id: string; nodes: number; at: number };
  "cluster.resumed": { policy_version: number; at: number };
  /** The policy version moved forward; `stale_cancelled` rollouts were stopped to run again. */
  "policy.version_advanced": { from: number; to: number; stale_cancelled: number; at: number };

  /** A store write failed (a full disk): it and every write after it are retried until the store takes them (store-guard.ts). */
  "store.write_failed": { code: string; description: string; at: number };
  /** The store took the write it had refused: `retries` failed attempts in all. */
  "store.writable_again": { description: string; retries: number; at: number };
  /** A restarted coordinator reloaded what its previous life left. */
  "coordinator.restored": {
    policy_version: number;
    groups: number;
    queued: number;
    awaiting_nodes: number;
    nodes: string[];
    groups_completed: number;
    at: number;
  };
}

export type CoordinatorEventName = keyof CoordinatorEvents;
