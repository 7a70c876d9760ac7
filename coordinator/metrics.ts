// Why: the coordinator's Prometheus metrics, produced by listening to its typed events (never by
// counters inside decisions): rollouts by state and failure kind, stage durations, dispatches,
// requeues, results and the trainer stream, nodes and what their heartbeats report, policy
// versions and staleness. State the coordinator holds anyway (queue depth, credits) is read at
// scrape time.
import { stageSeconds } from "../lib/dashboard-history.ts";
import { DURATION_BUCKETS_SECONDS, MetricsRegistry, STALENESS_BUCKETS, TOKEN_BUCKETS } from "../lib/metrics.ts";
import type { Coordinator } from "./coordinator.ts";
import type { CoordinatorEvents } from "./events.ts";
import { slots } from "./node-states.ts";
import { ROLLOUT_STATES, TERMINAL_ROLLOUT_STATES } from "./rollout-states.ts";
import { pendingCount, type TrainerStream } from "./trainer-streams.ts";

const LIVE_ROLLOUT_STATES = ROLLOUT_STATES.filter((s) => !(TERMINAL_ROLLOUT_STATES as readonly string[]).includes(s));

export interface CoordinatorMetricsSources {
  /** The trainer streams (credits, what is owed and in flight). */
  trainers?: () => Iterable<Readonly<TrainerStream>>;
}

export interface CoordinatorMetrics {
  registry: MetricsRegistry;
  /** The last heartbeat of each node still known. */
  heartbeats: ReadonlyMap<string, CoordinatorEvents["node.heartbeat"]>;
  /** Policy version a rollout (active, or ended recently) was dispatched at. */
  versionStarted(rolloutId: string): number | null;
}

export function coordinatorMetrics(coordinator: Coordinator, sources: CoordinatorMetricsSources = {}): CoordinatorMetrics {
  const r = new MetricsRegistry();
  const ev = coordinator.events;
  const heartbeats = new Map<string, CoordinatorEvents["node.heartbeat"]>();
  const dispatchedAt = new Map<string, number>();
  /** Of rollouts that ended: their result is announced after the state change. */
  const endedAt = new Map<string, number>();

  const rollouts = r.gauge("polar_rollouts", "Rollouts the coordinator holds unfinished, by state.", ["state"]);
  for (const state of LIVE_ROLLOUT_STATES) rollouts.set({ state }, 0);
  const finished = r.counter("polar_rollouts_finished_total", "Rollouts that ended, by final state.", ["state"]);
  const failures = r.counter(
    "polar_rollout_failures_total",
    "Ended rollouts by what their failure is attributed to (infrastructure, agent, evaluation, capture; cancelled).",
    ["kind"],
  );
  const queued = r.gauge("polar_queue_depth", "Rollouts waiting for a node.").collect((set) => set({}, coordinator.queue.size));
  const groupsRunning = r.gauge("polar_groups_running", "Groups with unfinished rollouts.").collect((set) => set({}, coordinator.groups.size));
  const groupsCreated = r.counter("polar_groups_created_total", "Groups accepted.");
  const groupsFinished = r.counter("polar_groups_finished_total", "Groups whose every rollout has a result, by status.", ["status"]);
  const groupsFlat = r.counter("polar_groups_flat_total", "Completed groups whose reward std was at or below their min_reward_std.");
  const groupsReplaced = r.counter("polar_groups_replaced_total", "Fresh groups started in place of flat ones.");
  const replacementsExhausted = r.counter("polar_group_replacements_exhausted_total", "Flat groups that asked for a replacement and got none.");
  // Listed even at 0: an operator's alert on them needs the series to exist.
  for (const c of [groupsFlat, groupsReplaced, replacementsExhausted]) c.inc({}, 0);
  const stage = r.histogram(
    "polar_rollout_stage_duration_seconds",
    "Stage durations of finished rollouts: queue (coordinator) and the node's stages.",
    ["stage"],
    DURATION_BUCKETS_SECONDS,
  );
  const dispatched = r.counter("polar_dispatched_total", "Assignments sent to nodes.");
  const requeued = r.counter("polar_requeued_total", "Rollouts put back in the queue, by cause.", ["cause"]);
  const exhausted = r.counter("polar_rollout_attempts_exhausted_total", "Rollouts failed because their node was lost on the last allowed attempt.");
  const accepted = r.counter("polar_results_accepted_total", "Results stored from nodes, by status.", ["status"]);
  const dropped = r.counter("polar_results_dropped_total", "Results dropped as late or repeated.");
  const rolloutTokens = r.histogram("polar_rollout_tokens", "Tokens of a result's traces, by part (prompt, response, trainable).", ["part"], TOKEN_BUCKETS);
  const tokens = r.counter("polar_result_tokens_total", "Tokens of accepted results' traces, by part.", ["part"]);
  const splits = r.counter("polar_trajectory_splits_total", "Trace splits of rebuilt trajectories, by cause (drift, compaction, sub-agent…).", ["cause"]);
  const normalisations = r.counter("polar_trajectory_normalisations_total", "Asymmetries normalised while rebuilding trajectories, by kind.", ["kind"]);
  const drift = r.counter("polar_trajectory_context_drift_tokens_total", "Context tokens shown to the trainer unlike what the engine saw.");
  const unfaithful = r.counter("polar_trajectory_unfaithful_tokens_total", "Trainable tokens whose id or logprob is not the engine's.");
  const streamed = r.counter("polar_results_streamed_total", "Result frames sent to trainers, by trainer.", ["trainer"]);
  const streamedBytes = r.counter("polar_results_streamed_bytes_total", "Bytes of result frames sent to trainers, by trainer.", ["trainer"]);
  const acked = r.counter("polar_results_acked_total", "Results trainers acknowledged, by trainer.", ["trainer"]);
  const credits = r.gauge("polar_trainer_credits", "Credits a connected trainer has left.", ["trainer"]);
  const unacked = r.gauge("polar_trainer_unacked", "Results sent to a trainer and not acknowledged yet.", ["trainer"]);
  const owed = r.gauge("polar_trainer_pending", "Results owed to a trainer and not sent yet (no credit, or not connected).", ["trainer"]);
  const nodes = r.gauge("polar_nodes", "Nodes by connection state.", ["state"]);
  const nodeSlots = r.gauge("polar_node_slots", "Rollouts a node runs at once (init + run + postrun workers).", ["node"]);
  const nodeAssigned = r.gauge("polar_node_assigned", "Rollouts assigned to a node and unfinished.", ["node"]);
  const nodeLoad = r.gauge("polar_node_stage_load", "A node's rollouts per stage, from its last heartbeat.", ["node", "stage"]);
  const nodeWarm = r.gauge("polar_node_warm_sandboxes", "Ready sandboxes per image on a node, from its last heartbeat.", ["node", "image"]);
  const joined = r.counter("polar_nodes_joined_total", "Node handshakes (first time or again).", ["reconnect"]);
  const lost = r.counter("polar_nodes_lost_total", "Nodes whose grace ran out.");
  const gateway = r.summary("polar_node_gateway_call_duration_seconds", "Gateway LLM call latency as nodes report it in heartbeats (count and sum).", ["node"]);
  const version = r.gauge("polar_policy_version", "The cluster's policy version.").collect((set) => set({}, coordinator.policyVersion));
  const advances = r.counter("polar_policy_version_advances_total", "Times the policy version moved forward.");
  const staleCancelled = r.counter("polar_stale_cancelled_total", "Rollouts cancelled and queued again for being too stale.");
  const staleness = r.histogram(
    "polar_result_staleness_versions",
    "Policy versions an accepted result lags behind the current one (current − version at dispatch).",
    [],
    STALENESS_BUCKETS,
  );
  const inFlightStaleness = r.gauge("polar_inflight_staleness_versions", "Policy-version lag of assigned rollouts: max and mean.", ["stat"]);
  const paused = r.gauge("polar_cluster_paused", "1 while the cluster is paused for a weight sync.").collect((set) => set({}, coordinator.isPaused ? 1 : 0));
  (void queued, groupsRunning, version, paused);

  r.gauge("polar_nodes_known", "Nodes the coordinator knows (connected, draining, or within their grace).").collect((set) => {
    let n = 0;
    for (const _ of coordinator.nodes.values()) n++;
    set({}, n);
  });
  nodes.collect((set) => {
    const by: Record<string, number> = { connected: 0, draining: 0, disconnected: 0 };
    for (const n of coordinator.nodes.values()) by[n.state] = (by[n.state] ?? 0) + 1;
    for (const [state, n] of Object.entries(by)) set({ state }, n);
  });
  nodeSlots.collect((set) => {
    for (const n of coordinator.nodes.values()) set({ node: n.id }, slots(n.capacity));
  });
  nodeAssigned.collect((set) => {
    for (const n of coordinator.nodes.values()) set({ node: n.id }, n.assigned.size);
  });
  inFlightStaleness.collect((set) => {
    let max = 0;
    let sum = 0;
    let count = 0;
    for (const v of dispatchedAt.values()) {
      const lag = coordinator.policyVersion - v;
      max = Math.max(max, lag);
      sum += lag;
      count++;
    }
    set({ stat: "max" }, max);
    set({ stat: "mean" }, count ? sum / count : 0);
  });
  const trainerGauges = (pick: (s: Readonly<TrainerStream>) => number) => (set: (labels: Record<string, string>, v: number) => void) => {
    for (const s of sources.trainers?.() ?? []) set({ trainer: s.id }, pick(s));
  };
  credits.collect(trainerGauges((s) => (s.peer ? s.credits : 0)));
  unacked.collect(trainerGauges((s) => s.inFlight.size));
  owed.collect(trainerGauges((s) => pendingCount(s)));

  ev.on("rollout.state_changed", (e) => {
    if (e.from !== null && (LIVE_ROLLOUT_STATES as readonly string[]).includes(e.from)) rollouts.add({ state: e.from }, -1);
    if ((LIVE_ROLLOUT_STATES as readonly string[]).includes(e.to)) rollouts.add({ state: e.to }, 1);
    else {
      finished.inc({ state: e.to });
      const v = dispatchedAt.get(e.rollout_id);
      if (v !== undefined) {
        endedAt.set(e.rollout_id, v);
        if (endedAt.size > 10_000) endedAt.delete(endedAt.keys().next().value!);
      }
      dispatchedAt.delete(e.rollout_id);
      if (e.to === "CANCELLED") failures.inc({ kind: "cancelled" });
    }
    if (e.from === "QUEUED" && e.to === "ASSIGNED" && e.in_state_ms !== undefined) stage.observe({ stage: "queue" }, e.in_state_ms / 1000);
  });
  ev.on("rollout.dispatched", (e) => {
    dispatched.inc();
    dispatchedAt.set(e.rollout_id, e.policy_version);
  });
  ev.on("rollout.requeued", (e) => requeued.inc({ cause: e.cause }, e.rollout_ids.length));
  ev.on("rollout.attempts_exhausted", () => {
    exhausted.inc();
    failures.inc({ kind: "infrastructure" });
  });
  ev.on("group.created", () => groupsCreated.inc());
  ev.on("group.finished", (e) => groupsFinished.inc({ status: e.status }));
  ev.on("group.flat", () => groupsFlat.inc());
  ev.on("group.replaced", () => groupsReplaced.inc());
  ev.on("group.replacements_exhausted", () => replacementsExhausted.inc());
  ev.on("result.dropped", () => dropped.inc());
  ev.on("result.accepted", (e) => {
    accepted.inc({ status: e.status });
    if (e.facts.failure_kind !== "none") failures.inc({ kind: e.facts.failure_kind });
    for (const [label, seconds] of Object.entries(stageSeconds(e.timing))) stage.observe({ stage: label }, seconds);
    for (const [part, n] of Object.entries(e.facts.tokens)) {
      tokens.inc({ part }, n);
      rolloutTokens.observe({ part }, n);
    }
    for (const [cause, n] of Object.entries(e.facts.splits)) splits.inc({ cause }, n);
    for (const [kind, n] of Object.entries(e.facts.normalisations)) normalisations.inc({ kind }, n);
    drift.inc({}, e.facts.context_drift_tokens);
    unfaithful.inc({}, e.facts.unfaithful_tokens);
    const at = dispatchedAt.get(e.rollout_id) ?? endedAt.get(e.rollout_id);
    if (at !== undefined) staleness.observe({}, coordinator.policyVersion - at);
  });
  ev.on("result.delivered", (e) => {
    streamed.inc({ trainer: e.trainer_id });
    streamedBytes.inc({ trainer: e.trainer_id }, e.bytes);
  });
  ev.on("result.acked", (e) => acked.inc({ trainer: e.trainer_id }, e.result_ids.length));
  ev.on("node.joined", (e) => joined.inc({ reconnect: String(e.reconnect) }));
  ev.on("node.lost", (e) => {
    lost.inc();
    heartbeats.delete(e.node_id);
  });
  ev.on("node.heartbeat", (e) => {
    heartbeats.set(e.node_id, e);
    if (e.gateway && e.gateway.calls > 0) gateway.add({ node: e.node_id }, e.gateway.total_ms / 1000, e.gateway.calls);
  });
  ev.on("policy.version_advanced", (e) => {
    advances.inc();
    staleCancelled.inc({}, e.stale_cancelled);
  });

  function loadCollector(set: (labels: Record<string, string>, v: number) => void): void {
    for (const [node, hb] of heartbeats) for (const [s, n] of Object.entries(hb.load)) set({ node, stage: s }, n);
  }
  function warmCollector(set: (labels: Record<string, string>, v: number) => void): void {
    for (const [node, hb] of heartbeats) for (const [image, n] of Object.entries(hb.warm_sandboxes)) set({ node, image }, n);
  }
  nodeLoad.collect(loadCollector);
  nodeWarm.collect(warmCollector);

  return { registry: r, heartbeats, versionStarted: (id) => dispatchedAt.get(id) ?? endedAt.get(id) ?? null };
}
