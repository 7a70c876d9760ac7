// The node's coordinator link against a real coordinator (port 0, real WebSockets) over the
// node's real store, its pipeline stood in by the test: an assignment cut off by a restart of
// the node is reported as interrupted in the next hello (never as a result), run again at the
// next attempt, and its result acknowledged — each step announced as a node event.
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionResult } from "../protocol/rollout.ts";
import type { StreamedResult } from "../protocol/trainer-stream.ts";
import { AGENT, startCluster, TASK, TOKENS, waitFor, type Cluster } from "./support/coordinator/cluster.ts";
import { CoordinatorLink, type NodeSide } from "../node/agent.ts";
import { coordinatorIdentity } from "../node/coordinator-identity.ts";
import { newNodeEvents, type NodeEvents } from "../node/events.ts";
import { interruptionCause, recoverUnfinished } from "../node/pipeline/recovery.ts";
import { AssignmentsRepo } from "../node/store/assignments-repo.ts";
import { openNodeStore, type OpenedStore } from "../node/store/db.ts";
import { RolloutsRepo } from "../node/store/rollouts-repo.ts";
import { localIds } from "../node/assignment-ids.ts";

let cluster: Cluster | undefined;
let store: OpenedStore | undefined;
const links: CoordinatorLink[] = [];
afterEach(async () => {
  for (const l of links.splice(0)) await l.stop();
  await cluster?.stop();
  store?.close();
  cluster = store = undefined;
});

const completed = (id: string) =>
  SessionResult.parse({
    session_id: id,
    task_id: `coordinator:${id}`,
    status: "COMPLETED",
    trajectory: {
      status: "COMPLETED",
      traces: [{ prompt_ids: [1, 2], response_ids: [3], loss_mask: [1], response_logprobs: [-0.1], finish_reason: "stop", reward: 1 }],
    },
    metadata: { reward: 1 },
  });

test("an assignment a node restart cut off is reported interrupted, runs again at attempt 2 and its result is acknowledged", async () => {
  cluster = await startCluster({ nodeGraceMs: 30_000 });
  const dbPath = join(mkdtempSync(join(tmpdir(), "polar-link-")), "node.db");
  store = await openNodeStore(dbPath);
  const rollouts = new RolloutsRepo(store.db);
  const assignments = new AssignmentsRepo(store.db);
  const started: string[] = [];
  const side: NodeSide = {
    assignments,
    async start(a) {
      const { rolloutId: id, taskId } = localIds(a);
      await rollouts.createTask(taskId, a.request, [{ id, sampleIndex: 0, priority: 0 }]);
      await assignments.insert({ rolloutId: id, coordinatorRolloutId: a.rollout_id, attempt: a.attempt, groupId: a.group_id, taskId: a.request.task_id });
      started.push(id);
      return id;
    },
    cancel: () => {},
    isLive: () => false,
    interruption: interruptionCause,
    load: () => ({ queued: 0, init: 0, ready: 0, run: started.length, postrun: 0 }),
    warmImages: () => ({}),
    takeGatewayLatency: async () => ({ calls: 0, total_ms: 0, max_ms: 0 }),
    pause: async () => 0,
    resume: () => {},
    drain: () => {},
  };
  const events = newNodeEvents();
  const seen: { name: keyof NodeEvents; payload: Record<string, unknown> }[] = [];
  events.onAny((name, payload) => void seen.push({ name, payload: payload as Record<string, unknown> }));
  const link = () => {
    const l = new CoordinatorLink(
      {
        url: cluster!.coordinator.url,
        token: TOKENS.nodeToken,
        nodeId: "linked",
        version: "test",
        capacity: { init: 1, run: 1, postrun: 1 },
        harnesses: ["mini"],
        engines: [],
        reconnectMinMs: 50,
        events,
        identity: coordinatorIdentity(dbPath, cluster!.coordinator.url, "linked"),
      },
      side,
    );
    links.push(l);
    l.start();
    return l;
  };

  const results: StreamedResult[] = [];
  const trainer = await cluster.trainer("tr", { onResult: (r) => void results.push(r) });
  const { rollout_ids } = await trainer.submit({ task: TASK, n: 1, agent: AGENT });
  const first = link();
  await waitFor(() => started.length === 1, "the first attempt started");
  // Killed: the link goes away, and the next start's recovery ends the unfinished attempt.
  await first.stop();
  expect(await recoverUnfinished(rollouts, "linked", async () => 0)).toEqual({ sandboxesRemoved: 0, rolloutsFailed: 1 });
  const second = link();
  await waitFor(() => started.length === 2, "the second attempt started");
  expect(started).toEqual([`${rollout_ids[0]}.1`, `${rollout_ids[0]}.2`]);
  await rollouts.saveResult(started[1]!, `coordinator:${started[1]}`, "COMPLETED", completed(started[1]!));
  second.onResult(completed(started[1]!), started[1]!);
  await waitFor(() => results.length === 1, "the result at the trainer");
  expect(results[0]).toMatchObject({ rollout_id: rollout_ids[0], status: "COMPLETED", reward: 1 });
  await waitFor(async () => (await assignments.owed()).length === 0, "nothing owed any more");
  const names = seen.map((e) => e.name);
  expect(names.filter((n) => n === "coordinator.connected")).toHaveLength(2);
  expect(seen.find((e) => e.name === "assignment.interrupted")!.payload).toMatchObject({
    coordinator_rollout_id: rollout_ids[0],
    attempt: 1,
    cause: "node_restarted",
  });
  expect(seen.filter((e) => e.name === "assignment.started").map((e) => e.payload.attempt)).toEqual([1, 2]);
  expect(seen.find((e) => e.name === "result.reported")!.payload).toMatchObject({ attempt: 2, status: "COMPLETED" });
  expect(seen.find((e) => e.name === "result.acked")!.payload).toMatchObject({ coordinator_rollout_id: rollout_ids[0], attempt: 2 });
  // The interrupted attempt's ERROR never reached the coordinator as a result.
  expect(names.filter((n) => n === "result.reported")).toHaveLength(1);
  expect((await (await cluster.admin("/v1/admin/stats")).json()) as { requeued: number; results_accepted: number }).toMatchObject({
    requeued: 1,
    results_accepted: 1,
  });
}, 60_000);
