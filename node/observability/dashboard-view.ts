// Why: what a standalone node's dashboard and admin drill-down read — the node as the one entry
// of "the cluster" (slots, stage load, warm and starting sandboxes per image, engines, calls in
// flight), recent results and tasks, and one task or rollout in detail from the node's store and
// its gateway's recorded calls — with finished results and tasks announced on `/events`
// (`rollout.result`, `group.summary`) and the node's status pushed there while anyone reads it.
import { DashboardHistory, stageSeconds, stageSpans } from "../../lib/dashboard-history.ts";
import type { EventFeed } from "../../lib/event-feed.ts";
import type { EventBus } from "../../lib/events.ts";
import { buildTranscript } from "../../lib/transcript.ts";
import { resultFacts } from "../../lib/result-facts.ts";
import type { DashboardNode, DashboardSnapshot, GroupDetail, RolloutDetail } from "../../protocol/admin.ts";
import type { NodeEvents } from "../events.ts";
import type { PolicyGate } from "../gateway/policy-gate.ts";
import type { Pipeline } from "../pipeline/pipeline.ts";
import type { Pool } from "../runtime/pool.ts";
import type { CallsRepo } from "../store/calls-repo.ts";
import type { RolloutsRepo } from "../store/rollouts-repo.ts";
import { perImage } from "./metrics.ts";

/** How often the node's status is pushed on `/events` while someone reads it. */
export const STATUS_EVERY_MS = 2000;

export interface NodeDashboardDeps {
  nodeId: string;
  workers: { init: number; run: number; postrun: number };
  engines: string[];
  events: EventBus<NodeEvents>;
  feed: EventFeed;
  pipeline: Pipeline;
  pool: Pool;
  gate: PolicyGate;
  rollouts: RolloutsRepo;
  calls: CallsRepo;
  /** connected / disconnected to a coordinator, or standalone; draining wins. */
  linkStatus(): string;
}

export interface NodeDashboard {
  snapshot(): DashboardSnapshot;
  task(taskId: string): Promise<GroupDetail | undefined>;
  rollout(rolloutId: string): Promise<RolloutDetail | undefined>;
  stop(): void;
}

export function nodeDashboard(d: NodeDashboardDeps): NodeDashboard {
  const history = new DashboardHistory();
  const finishedBy: Record<string, number> = {};
  let gatewayCalls = 0;
  let gatewayMs = 0;

  d.events.on("gateway.call", (e) => {
    gatewayCalls++;
    gatewayMs += e.total_ms;
  });
  d.events.on("rollout.finished", (e) => {
    finishedBy[e.status] = (finishedBy[e.status] ?? 0) + 1;
    const result = {
      rollout_id: e.rollout_id,
      group_id: e.task_id,
      task_id: e.task_id,
      node_id: d.nodeId,
      status: e.status,
      reward: e.facts.reward,
      failure_kind: e.facts.failure_kind,
      cause: e.facts.cause,
      tokens: e.facts.tokens,
      stage_seconds: stageSeconds(e.timing),
      policy_version_started: null,
      policy_version: d.gate.policyVersion,
      staleness: null,
      at: e.at,
    };
    history.addResult(result);
    d.feed.publish("rollout.result", result);
  });
  d.events.on("task.finished", (e) => {
    d.feed.publish(
      "group.summary",
      history.groupFinished({
        group_id: e.task_id,
        task_id: e.task_id,
        status: e.status,
        n: e.completed_sessions,
        policy_version: d.gate.policyVersion,
        at: e.at,
      }),
    );
  });

  function self(): DashboardNode {
    const load = d.pipeline.metrics();
    return {
      node_id: d.nodeId,
      status: d.linkStatus(),
      slots: d.workers.init + d.workers.run + d.workers.postrun,
      used: d.pipeline.liveRollouts().length,
      load: {
        queued: load.init_queue_depth,
        init: load.init_inflight,
        ready: load.ready_depth,
        run: load.run_inflight,
        postrun: load.postrun_queue_depth + load.postrun_inflight,
      },
      warm_sandboxes: perImage(d.pool.warm()),
      starting_sandboxes: perImage(d.pool.starting()),
      engines: d.engines.map((url) => ({ url, in_flight: null })),
      calls_in_flight: d.gate.inFlightCalls,
      gateway_calls: gatewayCalls,
      gateway_mean_ms: gatewayCalls > 0 ? gatewayMs / gatewayCalls : null,
    };
  }

  function queue(): Record<string, number> {
    const m = d.pipeline.metrics();
    return {
      QUEUED: m.init_queue_depth,
      INIT: m.init_inflight,
      READY: m.ready_depth,
      RUN: m.run_inflight,
      POSTRUN: m.postrun_queue_depth + m.postrun_inflight,
      ...finishedBy,
    };
  }

  const status = setInterval(() => {
    if (d.feed.readerCount > 0) d.feed.publish("node.status", { ...self(), queue: queue(), policy_version: d.gate.policyVersion, paused: d.gate.isPaused });
  }, STATUS_EVERY_MS);

  return {
    snapshot() {
      return {
        service: "node",
        service_id: d.nodeId,
        policy_version: d.gate.policyVersion,
        paused: d.gate.isPaused,
        queue: queue(),
        nodes: [self()],
        trainers: [],
        active: d.pipeline.liveRollouts().map((r) => ({
          rollout_id: r.id,
          group_id: r.taskId,
          task_id: r.taskId,
          state: r.state,
          stage: r.state,
          node_id: d.nodeId,
          policy_version_started: null,
        })),
        results: [...history.results],
        groups: [...history.groups],
        last_event_id: d.feed.since(0).at(-1)?.id ?? 0,
        at: Date.now(),
      };
    },

    async task(taskId) {
      const task = await d.rollouts.task(taskId);
      if (!task) return undefined;
      const rows = await d.rollouts.rolloutsOf(taskId);
      const results = new Map((await d.rollouts.results(taskId)).map((r) => [r.session_id, r]));
      return {
        group_id: taskId,
        task_id: taskId,
        state: task.status,
        n: rows.length,
        trainer_id: null,
        rollouts: rows.map((r) => {
          const res = results.get(r.id);
          const facts = res ? resultFacts(res) : null;
          return {
            rollout_id: r.id,
            state: r.state,
            node_id: d.nodeId,
            attempt: 1,
            status: res ? String(res.status) : null,
            reward: facts?.reward ?? null,
            failure_kind: facts?.failure_kind ?? null,
            cause: facts?.cause ?? null,
          };
        }),
      };
    },

    async rollout(rolloutId) {
      const live = d.pipeline.liveRollouts().find((r) => r.id === rolloutId);
      const result = (await d.rollouts.result(rolloutId)) ?? null;
      const steps = await d.rollouts.events(rolloutId);
      if (!live && !result && steps.length === 0) return undefined;
      const metadata = (result?.metadata ?? {}) as { gateway_session_id?: unknown };
      const sessionId = live?.session?.id ?? (typeof metadata.gateway_session_id === "string" ? metadata.gateway_session_id : null);
      const calls = sessionId ? await d.calls.list(sessionId) : [];
      return {
        rollout_id: rolloutId,
        group_id: live?.taskId ?? (typeof result?.task_id === "string" ? result.task_id : null),
        task_id: live?.taskId ?? (typeof result?.task_id === "string" ? result.task_id : null),
        state: live?.state ?? steps.at(-1)?.toState ?? "unknown",
        node_id: d.nodeId,
        timeline: steps.map((s) => ({ at: Date.parse(s.at), state: s.toState, node_id: d.nodeId })),
        stages: stageSpans(result?.timing),
        result,
        messages: buildTranscript(calls),
      };
    },

    stop: () => clearInterval(status),
  };
}
