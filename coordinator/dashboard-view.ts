// Why: what the coordinator's dashboard and its admin drill-down read — a snapshot of the cluster
// (nodes with their last heartbeat, trainers, the queue, recent results and groups) and one group
// or rollout in detail — built from its events (kept in a bounded DashboardHistory) and its store.
// Finished results and groups are also announced on `/events` (`rollout.result`, `group.summary`),
// so the page is updated by the same facts the snapshot holds.
import { DashboardHistory, stageSeconds, stageSpans } from "../lib/dashboard-history.ts";
import type { EventFeed } from "../lib/event-feed.ts";
import { resultFacts } from "../lib/result-facts.ts";
import type { DashboardNode, DashboardResult, DashboardSnapshot, GroupDetail, RolloutDetail } from "../protocol/admin.ts";
import type { Coordinator } from "./coordinator.ts";
import type { CoordinatorMetrics } from "./metrics.ts";
import { slots } from "./node-states.ts";
import { isTerminalRolloutState } from "./rollout-states.ts";
import { wholeSession } from "./packed-results.ts";
import { pendingCount, type TrainerStream } from "./trainer-streams.ts";
import { transcriptOf } from "../lib/transcript.ts";

export interface CoordinatorDashboard {
  snapshot(): Promise<DashboardSnapshot>;
  group(groupId: string): Promise<GroupDetail | undefined>;
  rollout(rolloutId: string, groupId?: string): Promise<RolloutDetail | undefined>;
}

export function coordinatorDashboard(
  coordinator: Coordinator,
  deps: { metrics: CoordinatorMetrics; feed: EventFeed; trainers?: () => Iterable<Readonly<TrainerStream>> },
): CoordinatorDashboard {
  const history = new DashboardHistory();
  const ev = coordinator.events;
  const { feed, metrics } = deps;
  /** Group → task id for recent groups (results of a finished group still arrive). */
  const taskOf = new Map<string, string>();
  /** Rollout → group for recent rollouts (the drill-down finds a finished rollout's group). */
  const groupOf = new Map<string, string>();
  const remember = <K, V>(map: Map<K, V>, k: K, v: V, max = 20_000) => {
    map.set(k, v);
    if (map.size > max) map.delete(map.keys().next().value!);
  };

  const record = (r: DashboardResult) => {
    history.addResult(r);
    feed.publish("rollout.result", r);
  };

  ev.on("group.created", (e) => {
    remember(taskOf, e.group_id, e.task_id);
    for (const id of e.rollout_ids) remember(groupOf, id, e.group_id);
  });
  ev.on("rollout.state_changed", (e) => {
    remember(groupOf, e.rollout_id, e.group_id);
    history.step(e.rollout_id, { at: e.at, state: e.to, node_id: e.node_id });
  });
  // A node's terminal state is the coordinator's own next step (its state change, with the result).
  ev.on(
    "rollout.stage_changed",
    (e) => void (!isTerminalRolloutState(e.stage) && history.step(e.rollout_id, { at: e.at, state: e.stage, node_id: e.node_id })),
  );
  ev.on("result.accepted", (e) => {
    const started = metrics.versionStarted(e.rollout_id);
    const version = coordinator.policyVersion;
    const queueMs = history.timeline(e.rollout_id).reduce<{ queued?: number; seconds?: number }>((acc, s) => {
      if (s.state === "QUEUED") acc.queued = s.at;
      else if (s.state === "ASSIGNED" && acc.queued !== undefined) acc.seconds = (s.at - acc.queued) / 1000;
      return acc;
    }, {}).seconds;
    record({
      rollout_id: e.rollout_id,
      group_id: e.group_id,
      task_id: taskOf.get(e.group_id) ?? null,
      node_id: e.node_id,
      status: e.status,
      reward: e.facts.reward,
      failure_kind: e.facts.failure_kind,
      cause: e.facts.cause,
      tokens: e.facts.tokens,
      stage_seconds: { ...stageSeconds(e.timing), ...(queueMs !== undefined && queueMs > 0 && { queue: queueMs }) },
      policy_version_started: started,
      policy_version: version,
      staleness: started === null ? null : version - started,
      at: e.at,
    });
  });
  ev.on("rollout.attempts_exhausted", (e) => {
    record({
      rollout_id: e.rollout_id,
      group_id: e.group_id,
      task_id: taskOf.get(e.group_id) ?? null,
      node_id: e.node_id || null,
      status: "ERROR",
      reward: null,
      failure_kind: "infrastructure",
      cause: e.cause,
      tokens: { prompt: 0, response: 0, trainable: 0 },
      stage_seconds: {},
      policy_version_started: metrics.versionStarted(e.rollout_id),
      policy_version: coordinator.policyVersion,
      staleness: null,
      at: e.at,
    });
  });
  ev.on("group.finished", (e) => {
    // The group's last result is announced right after its group: summarise once it has been.
    setTimeout(
      () =>
        feed.publish(
          "group.summary",
          history.groupFinished({ group_id: e.group_id, task_id: e.task_id, status: e.status, n: e.n, policy_version: coordinator.policyVersion, at: e.at }),
        ),
      0,
    );
  });

  function nodes(): DashboardNode[] {
    return [...coordinator.nodes.values()].map((n) => {
      const hb = metrics.heartbeats.get(n.id);
      return {
        node_id: n.id,
        status: n.state,
        slots: slots(n.capacity),
        used: n.assigned.size,
        load: n.load,
        warm_sandboxes: hb?.warm_sandboxes ?? Object.fromEntries([...n.warm].map((image) => [image, 1])),
        starting_sandboxes: null,
        engines: (n.info?.engines ?? []).map((url) => ({ url, in_flight: null })),
        calls_in_flight: null,
        gateway_calls: n.gatewayCalls,
        gateway_mean_ms: n.gatewayCalls > 0 ? n.gatewayTotalMs / n.gatewayCalls : null,
      };
    });
  }

  return {
    async snapshot() {
      const lastEventId = feed.since(0).at(-1)?.id ?? 0;
      const queue: Record<string, number> = await coordinator.repo.countRolloutsByState();
      const active = [...coordinator.active.values()].map((r) => ({
        rollout_id: r.id,
        group_id: r.groupId,
        task_id: coordinator.groups.get(r.groupId)?.taskId ?? null,
        state: r.state,
        stage: r.stage,
        node_id: r.nodeId,
        policy_version_started: r.policyVersionStarted,
      }));
      return {
        service: "coordinator",
        service_id: "coordinator",
        policy_version: coordinator.policyVersion,
        paused: coordinator.isPaused,
        queue,
        nodes: nodes(),
        trainers: [...(deps.trainers?.() ?? [])].map((s) => ({
          trainer_id: s.id,
          connected: s.peer !== null,
          credits: s.credits,
          unacked: s.inFlight.size,
          pending: pendingCount(s),
        })),
        active,
        results: [...history.results],
        groups: [...history.groups],
        last_event_id: lastEventId,
        at: Date.now(),
      };
    },

    async group(groupId) {
      const row = await coordinator.repo.findGroup(groupId);
      if (!row) return undefined;
      const rows = await coordinator.repo.groupRollouts(groupId);
      const results = new Map((await coordinator.repo.groupResultsWithTraces(groupId)).map((r) => [r.rolloutId, r]));
      return {
        group_id: row.id,
        task_id: row.taskId,
        state: row.state,
        n: row.n,
        trainer_id: row.trainerId,
        rollouts: rows.map((r) => {
          const res = results.get(r.id);
          const facts = res ? resultFacts(wholeSession(res)) : null;
          return {
            rollout_id: r.id,
            state: r.state,
            node_id: r.nodeId,
            attempt: r.attempt,
            status: res?.status ?? null,
            reward: res ? (facts!.reward ?? null) : null,
            failure_kind: res?.status === "CANCELLED" ? "cancelled" : (facts?.failure_kind ?? null),
            cause: r.cause,
          };
        }),
      };
    },

    async rollout(rolloutId, groupHint) {
      const live = coordinator.active.get(rolloutId);
      const groupId = groupHint ?? live?.groupId ?? groupOf.get(rolloutId);
      if (!groupId) return undefined;
      const row = (await coordinator.repo.groupRollouts(groupId)).find((r) => r.id === rolloutId);
      if (!row) return undefined;
      const stored = (await coordinator.repo.groupResultsWithTraces(groupId)).find((r) => r.rolloutId === rolloutId);
      const session = stored ? wholeSession(stored) : null;
      const group = await coordinator.repo.findGroup(groupId);
      return {
        rollout_id: rolloutId,
        group_id: groupId,
        task_id: group?.taskId ?? null,
        state: live?.state ?? row.state,
        node_id: live?.nodeId ?? row.nodeId,
        timeline: history.timeline(rolloutId),
        stages: stageSpans(session?.timing),
        result: session,
        messages: transcriptOf(session),
      };
    },
  };
}
