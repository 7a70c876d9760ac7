// Why: what joining a coordinator adds to a running node — the link's view of the pipeline,
// pool, gateway and store (node/agent.ts stays free of them) — assembled in one place.
import type { EventBus } from "../lib/events.ts";
import { TaskRequest } from "../protocol/rollout.ts";
import { requestOverTask, type TaskCatalog } from "../lib/task-catalog.ts";
import { CoordinatorLink } from "./agent.ts";
import { localIds } from "./assignment-ids.ts";
import { coordinatorIdentity } from "./coordinator-identity.ts";
import type { NodeEvents } from "./events.ts";
import type { PolicyGate } from "./gateway/policy-gate.ts";
import { existsSync } from "node:fs";
import { PINNED_CLIS, pinnedBinary } from "./harness/common.ts";
import { resolveNames } from "../protocol/harness-names.ts";
import type { Pipeline } from "./pipeline/pipeline.ts";
import { interruptionCause } from "./pipeline/recovery.ts";
import { refusedResult } from "./pipeline/result.ts";
import { newRollout } from "./pipeline/rollout.ts";
import type { SandboxPool } from "./runtime/types.ts";
import { AssignmentsRepo } from "./store/assignments-repo.ts";
import { buildTranscript } from "../lib/transcript.ts";
import { CallLatency } from "./store/call-latency.ts";
import { CallsRepo } from "./store/calls-repo.ts";
import type { NodeDb } from "./store/db.ts";
import type { RolloutsRepo } from "./store/rollouts-repo.ts";
import pkg from "../package.json" with { type: "json" };

export interface ClusterDeps {
  coordinator: { url: string; token: string };
  /** The node's store file: its coordinator identity is kept beside it. */
  dbPath: string;
  nodeId: string;
  workers: { init: number; run: number; postrun: number };
  engines: string[];
  db: NodeDb;
  rollouts: RolloutsRepo;
  pipeline: Pipeline;
  pool: SandboxPool;
  gate: PolicyGate;
  /** An assignment naming a task of the node's task file may omit what the task defines. */
  catalog: TaskCatalog;
  events?: EventBus<NodeEvents>;
  drain(): void;
}

export function joinCoordinator(deps: ClusterDeps): CoordinatorLink {
  const assignments = new AssignmentsRepo(deps.db);
  const latency = new CallLatency(deps.db);
  const calls = new CallsRepo(deps.db, 16);
  const link = new CoordinatorLink(
    {
      url: deps.coordinator.url,
      token: deps.coordinator.token,
      nodeId: deps.nodeId,
      version: pkg.version,
      capacity: deps.workers,
      harnesses: ["mini", "command", ...PINNED_CLIS.filter((cli) => existsSync(pinnedBinary(cli)))],
      engines: deps.engines,
      ...(deps.events && { events: deps.events }),
      identity: coordinatorIdentity(deps.dbPath, deps.coordinator.url, deps.nodeId),
    },
    {
      assignments,
      async start(a) {
        const { rolloutId, taskId } = localIds(a);
        const body = requestOverTask(a.request, deps.catalog.get(a.request.task_id));
        // The coordinator calls a rollout API task's callback_url once the whole group ends; the
        // node must not call it for one session (not even after a restart reloads the task).
        const request = TaskRequest.parse({ ...body, num_samples: 1, timeout_seconds: a.remaining_timeout_seconds, callback_url: null });
        await deps.rollouts.createTask(taskId, request, [{ id: rolloutId, sampleIndex: 0, priority: request.dispatch_priority }]);
        await assignments.insert({ rolloutId, coordinatorRolloutId: a.rollout_id, attempt: a.attempt, groupId: a.group_id, taskId: request.task_id });
        const names = resolveNames(request.agent.harness, request.builder.strategy);
        if (names.ok) deps.pipeline.submit(newRollout({ id: rolloutId, taskId, sampleIndex: 0, request, harness: names.harness, strategy: names.strategy }));
        else await refuse(rolloutId, taskId, request, names.refusal);
        return rolloutId;
      },
      cancel: (id) => void deps.pipeline.stop(id, "cancelled"),
      isLive: (id) => deps.pipeline.liveRollouts().some((r) => r.id === id),
      interruption: interruptionCause,
      load() {
        const m = deps.pipeline.metrics();
        return {
          queued: m.init_queue_depth,
          init: m.init_inflight,
          ready: m.ready_depth,
          run: m.run_inflight,
          postrun: m.postrun_queue_depth + m.postrun_inflight,
        };
      },
      warmImages() {
        const images: Record<string, number> = {};
        for (const [key, n] of Object.entries(deps.pool.warm())) {
          const image = key.split("#")[0]!;
          images[image] = (images[image] ?? 0) + n;
        }
        return images;
      },
      takeGatewayLatency: () => latency.take(),
      async pause() {
        await deps.gate.pause();
        return deps.gate.policyVersion;
      },
      // The coordinator's version only moves forward, but an operator may have resumed this node's
      // gateway with a newer one by hand: the node resumes either way, keeping the newer version.
      resume: (version) => deps.gate.resume(Math.max(version, deps.gate.policyVersion)),
      drain: deps.drain,
      async transcript(result) {
        const sessionId = result.metadata.gateway_session_id;
        return typeof sessionId === "string" ? buildTranscript(await calls.list(sessionId)) : null;
      },
    },
  );
  /** Never run as some other harness: the rollout fails here, stored and reported like any result. */
  async function refuse(rolloutId: string, taskId: string, request: TaskRequest, message: string): Promise<void> {
    const result = refusedResult({ rolloutId, taskId, request, nodeId: deps.nodeId, message });
    await deps.rollouts.saveResult(rolloutId, taskId, result.status, result);
    await deps.rollouts.recordTransition(rolloutId, 1, "QUEUED", "ERROR", new Date().toISOString(), { cause: "assignment_refused", message });
    link.onResult(result, rolloutId);
  }
  deps.pipeline.transitions.onTransition((r) => link.onTransition(r.id, r.state));
  link.start();
  return link;
}
