// Why: the node's Prometheus metrics, produced by listening to its typed events (rollout
// transitions and results, gateway calls, the coordinator link) and its sandbox pool's events;
// state the node holds anyway (pipeline depths, warm and starting sandboxes, calls in flight,
// policy version) is read at scrape time.
import { stageSeconds } from "../../lib/dashboard-history.ts";
import type { EventBus } from "../../lib/events.ts";
import { DURATION_BUCKETS_SECONDS, MetricsRegistry, TOKEN_BUCKETS } from "../../lib/metrics.ts";
import type { NodeEvents } from "../events.ts";
import type { PolicyGate } from "../gateway/policy-gate.ts";
import type { Pipeline } from "../pipeline/pipeline.ts";
import type { Pool } from "../runtime/pool.ts";

export interface NodeMetricsSources {
  events: EventBus<NodeEvents>;
  pipeline: Pipeline;
  pool: Pool;
  gate: PolicyGate;
}

/** Ready (or starting) sandboxes per image: pool keys are `image#options`. */
export function perImage(byKey: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, n] of Object.entries(byKey)) {
    const image = key.split("#")[0]!;
    out[image] = (out[image] ?? 0) + n;
  }
  return out;
}

export function nodeMetrics(s: NodeMetricsSources): MetricsRegistry {
  const r = new MetricsRegistry();
  const ev = s.events;

  r.gauge("polar_node_pipeline_rollouts", "Rollouts in the node's pipeline by stage (queued for init, in init, ready, running, postrun queued and running).", [
    "stage",
  ]).collect((set) => {
    const m = s.pipeline.metrics();
    set({ stage: "init_queue" }, m.init_queue_depth);
    set({ stage: "init" }, m.init_inflight);
    set({ stage: "ready" }, m.ready_depth);
    set({ stage: "run" }, m.run_inflight);
    set({ stage: "postrun_queue" }, m.postrun_queue_depth);
    set({ stage: "postrun" }, m.postrun_inflight);
  });
  const transitions = r.counter("polar_node_rollout_transitions_total", "Pipeline state changes, by the state entered.", ["to"]);
  const finished = r.counter("polar_node_rollouts_finished_total", "Rollouts whose result was stored, by status.", ["status"]);
  const failures = r.counter(
    "polar_rollout_failures_total",
    "Finished rollouts by what their failure is attributed to (infrastructure, agent, evaluation, capture; cancelled).",
    ["kind"],
  );
  const stage = r.histogram(
    "polar_rollout_stage_duration_seconds",
    "Stage durations of finished rollouts (SessionTiming).",
    ["stage"],
    DURATION_BUCKETS_SECONDS,
  );
  const tokens = r.counter("polar_result_tokens_total", "Tokens of stored results' traces, by part.", ["part"]);
  const rolloutTokens = r.histogram("polar_rollout_tokens", "Tokens of a result's traces, by part (prompt, response, trainable).", ["part"], TOKEN_BUCKETS);
  const splits = r.counter("polar_trajectory_splits_total", "Trace splits of rebuilt trajectories, by cause (drift, compaction, sub-agent…).", ["cause"]);
  const normalisations = r.counter("polar_trajectory_normalisations_total", "Asymmetries normalised while rebuilding trajectories, by kind.", ["kind"]);
  const drift = r.counter("polar_trajectory_context_drift_tokens_total", "Context tokens shown to the trainer unlike what the engine saw.");
  const unfaithful = r.counter("polar_trajectory_unfaithful_tokens_total", "Trainable tokens whose id or logprob is not the engine's.");
  const tasksSubmitted = r.counter("polar_node_tasks_submitted_total", "Rollout-API tasks accepted.");
  const tasksFinished = r.counter("polar_node_tasks_finished_total", "Rollout-API tasks ended, by status.", ["status"]);

  r.gauge("polar_sandbox_pool_warm", "Ready sandboxes per image.", ["image"]).collect((set) => {
    for (const [image, n] of Object.entries(perImage(s.pool.warm()))) set({ image }, n);
  });
  r.gauge("polar_sandbox_pool_starting", "Sandboxes starting per image.", ["image"]).collect((set) => {
    for (const [image, n] of Object.entries(perImage(s.pool.starting()))) set({ image }, n);
  });
  const handout = r.histogram(
    "polar_sandbox_handout_seconds",
    "Time to hand a sandbox to a rollout, by whether one was warm.",
    ["warm"],
    DURATION_BUCKETS_SECONDS,
  );
  const started = r.histogram("polar_sandbox_start_seconds", "Time to start a sandbox for the pool.", [], DURATION_BUCKETS_SECONDS);
  const startFailures = r.counter("polar_sandbox_start_failures_total", "Sandbox starts that failed.");
  const destroyed = r.counter("polar_sandbox_destroyed_total", "Sandboxes destroyed, by reason.", ["reason"]);
  s.pool.onEvent((e) => {
    if (e.type === "taken") handout.observe({ warm: String(e.warm) }, e.duration_ms / 1000);
    else if (e.type === "started") started.observe({}, e.duration_ms / 1000);
    else if (e.type === "failed") startFailures.inc();
    else destroyed.inc({ reason: e.reason });
  });

  const calls = r.counter("polar_gateway_calls_total", "LLM calls recorded by the gateway, by dialect and outcome (ok or the error code).", [
    "dialect",
    "code",
  ]);
  const callSeconds = r.histogram(
    "polar_gateway_call_duration_seconds",
    "LLM call latency through the gateway (arrival to recorded), by dialect.",
    ["dialect"],
    DURATION_BUCKETS_SECONDS,
  );
  const engineSeconds = r.histogram("polar_gateway_engine_duration_seconds", "Time the engine took per call, by engine.", ["engine"], DURATION_BUCKETS_SECONDS);
  const queuedSeconds = r.histogram(
    "polar_gateway_queued_seconds",
    "Time a call waited before reaching the engine (pause, sequencing).",
    [],
    DURATION_BUCKETS_SECONDS,
  );
  const callTokens = r.counter("polar_gateway_tokens_total", "Tokens of recorded calls, by kind (prompt, completion).", ["kind"]);
  r.gauge("polar_gateway_calls_in_flight", "LLM calls between the policy gate and their recording.").collect((set) => set({}, s.gate.inFlightCalls));
  r.gauge("polar_gateway_calls_waiting", "LLM calls held by a pause.").collect((set) => set({}, s.gate.waitingCalls));
  r.gauge("polar_gateway_paused", "1 while the gateway is paused for a weight sync.").collect((set) => set({}, s.gate.isPaused ? 1 : 0));
  r.gauge("polar_policy_version", "The policy version calls are stamped with.").collect((set) => set({}, s.gate.policyVersion));
  ev.on("gateway.call", (e) => {
    calls.inc({ dialect: e.dialect, code: e.error_code ?? "ok" });
    callSeconds.observe({ dialect: e.dialect }, e.total_ms / 1000);
    queuedSeconds.observe({}, e.queued_ms / 1000);
    if (e.engine_url) engineSeconds.observe({ engine: e.engine_url }, e.engine_ms / 1000);
    if (e.prompt_tokens !== null) callTokens.inc({ kind: "prompt" }, e.prompt_tokens);
    if (e.completion_tokens !== null) callTokens.inc({ kind: "completion" }, e.completion_tokens);
  });

  ev.on("rollout.state_changed", (e) => transitions.inc({ to: e.to }));
  ev.on("rollout.finished", (e) => {
    finished.inc({ status: e.status });
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
  });
  ev.on("task.submitted", () => tasksSubmitted.inc());
  ev.on("task.finished", (e) => tasksFinished.inc({ status: e.status }));

  const connected = r.gauge("polar_coordinator_connected", "1 while the node's link to a coordinator is up.");
  connected.set({}, 0);
  const assignments = r.counter("polar_coordinator_assignments_total", "Rollouts the coordinator assigned to this node.");
  const cancels = r.counter("polar_coordinator_cancels_total", "Assignments the coordinator cancelled.");
  const reported = r.counter("polar_coordinator_results_reported_total", "Result frames sent to the coordinator (repeats until acknowledged included).");
  const acked = r.counter("polar_coordinator_results_acked_total", "Results the coordinator acknowledged.");
  const interrupted = r.counter(
    "polar_coordinator_assignments_interrupted_total",
    "Assignments this node's restart cut off (queued again by the coordinator).",
  );
  const pauses = r.counter("polar_gateway_pauses_total", "Pauses asked by the coordinator (weight syncs).");
  ev.on("coordinator.connected", () => connected.set({}, 1));
  ev.on("coordinator.disconnected", () => connected.set({}, 0));
  ev.on("assignment.started", () => assignments.inc());
  ev.on("assignment.cancelled", () => cancels.inc());
  ev.on("result.reported", () => reported.inc());
  ev.on("result.acked", () => acked.inc());
  ev.on("assignment.interrupted", () => interrupted.inc());
  ev.on("gateway.paused", () => pauses.inc());
  return r;
}
