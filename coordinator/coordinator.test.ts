// The coordinator over real WebSockets with simulated nodes and the TypeScript trainer client:
// groups end to end, credits, node loss and late results, trainer reconnects, restarts, early
// stop, pause, and hostile frames.
import { afterEach, describe, expect, test } from "bun:test";
import type { StreamedResult } from "../protocol/trainer-stream.ts";
import { AGENT, startCluster, TASK, TOKENS, waitFor, type Cluster } from "../test/support/coordinator/cluster.ts";
import { defaultResult } from "../test/support/coordinator/simulated-node.ts";

let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

const T = 60_000;

describe("coordinator", () => {
  test(
    "a group runs end to end across two nodes and ends with GRPO advantages",
    async () => {
      cluster = await startCluster();
      const rewards = [1, 0, 1, 1];
      let next = 0;
      const make = (a: Parameters<typeof defaultResult>[0]) => defaultResult(a, rewards[next++ % rewards.length]);
      const a = await cluster.node("a", { makeResult: make });
      const b = await cluster.node("b", { makeResult: make });
      const results: StreamedResult[] = [];
      const groups: { advantages: (number | null)[]; rewards: (number | null)[] }[] = [];
      const trainer = await cluster.trainer("tr", { onResult: (r) => void results.push(r), onGroup: (g) => void groups.push(g) });
      const { group_id, rollout_ids } = await trainer.submit({ task: TASK, n: 4, agent: AGENT, advantages: "mean" });
      await waitFor(() => results.length === 4 && groups.length === 1, "4 results and the group message");
      expect(new Set(results.map((r) => r.rollout_id))).toEqual(new Set(rollout_ids));
      expect(results.every((r) => r.group_id === group_id && r.status === "COMPLETED" && r.traces.length === 1)).toBe(true);
      expect(a.received.length + b.received.length).toBe(4);
      expect(a.received.length).toBeGreaterThan(0);
      expect(b.received.length).toBeGreaterThan(0);
      const g = groups[0]!;
      const mean = g.rewards.reduce((x, y) => x! + y!, 0)! / 4;
      expect(g.advantages).toEqual(g.rewards.map((r) => r! - mean));
      expect(trainer.counts.duplicates).toBe(0);
    },
    T,
  );

  test(
    "credits are never exceeded",
    async () => {
      cluster = await startCluster();
      await cluster.node("a", { capacity: { init: 4, run: 8, postrun: 4 } });
      const received: StreamedResult[] = [];
      const trainer = await cluster.trainer("tr", { window: 2, autoAck: false, onResult: (r) => void received.push(r) });
      await trainer.submit({ task: TASK, n: 10, agent: AGENT });
      await waitFor(
        async () =>
          ((await (await cluster!.admin("/v1/admin/stats")).json()) as { rollouts_by_state: Record<string, number> }).rollouts_by_state.COMPLETED === 10,
        "all 10 stored",
      );
      await Bun.sleep(200);
      expect(received.length).toBe(2);
      trainer.ack(received.map((r) => r.result_id));
      trainer.credit(3);
      await waitFor(() => received.length === 5, "3 more after 3 credits");
      await Bun.sleep(200);
      expect(received.length).toBe(5);
    },
    T,
  );

  test(
    "a node lost mid-rollout: its rollouts finish on the other node, each delivered once; its late result is dropped",
    async () => {
      cluster = await startCluster({ nodeGraceMs: 200 });
      const slow = await cluster.node("slow", { runMs: () => 60_000, capacity: { init: 1, run: 2, postrun: 1 } });
      const results: StreamedResult[] = [];
      const trainer = await cluster.trainer("tr", { onResult: (r) => void results.push(r) });
      const { rollout_ids } = await trainer.submit({ task: TASK, n: 3, agent: AGENT });
      await waitFor(() => slow.received.length === 3, "slow node holds all 3");
      const lostAttempt = slow.received[0]!;
      slow.kill();
      const fast = await cluster.node("fast");
      await waitFor(() => results.length === 3, "3 results from the other node");
      expect(new Set(results.map((r) => r.rollout_id))).toEqual(new Set(rollout_ids));
      expect(fast.received.every((a) => a.attempt === 2)).toBe(true);
      // The lost node comes back with a result of the old attempt: acknowledged, never delivered.
      const ghost = await cluster.node("slow");
      ghost.send({ type: "result", rollout_id: lostAttempt.rollout_id, attempt: 1, result: defaultResult(lostAttempt) });
      await waitFor(
        async () => ((await (await cluster!.admin("/v1/admin/stats")).json()) as { results_late_dropped: number }).results_late_dropped >= 1,
        "late result dropped",
      );
      await Bun.sleep(200);
      expect(results.length).toBe(3);
      expect(trainer.counts.duplicates).toBe(0);
    },
    T,
  );

  test(
    "a node that reconnects within the grace keeps its rollouts; what it no longer holds is requeued",
    async () => {
      cluster = await startCluster({ nodeGraceMs: 5_000 });
      const node = await cluster.node("n", { runMs: () => 300, capacity: { init: 1, run: 1, postrun: 1 } });
      const results: StreamedResult[] = [];
      const trainer = await cluster.trainer("tr", { onResult: (r) => void results.push(r) });
      await trainer.submit({ task: TASK, n: 2, agent: AGENT });
      await waitFor(() => node.received.length === 2, "node holds both");
      node.disconnect();
      await Bun.sleep(100);
      await node.connect();
      await waitFor(() => results.length === 2, "both results after the blip");
      expect(node.received.length).toBe(2);
      expect(results.map((r) => r.status)).toEqual(["COMPLETED", "COMPLETED"]);
    },
    T,
  );

  test(
    "a trainer that reconnects gets every unacknowledged result again, and the client drops repeats",
    async () => {
      cluster = await startCluster();
      await cluster.node("a");
      const firstConnection: StreamedResult[] = [];
      const trainer = await cluster.trainer("tr", { autoAck: false, window: 100, onResult: (r) => void firstConnection.push(r) });
      await trainer.submit({ task: TASK, n: 5, agent: AGENT });
      await waitFor(() => firstConnection.length === 5, "5 results");
      trainer.ack([firstConnection[0]!.result_id, firstConnection[1]!.result_id]);
      await Bun.sleep(100);
      trainer.close();
      const again: StreamedResult[] = [];
      const second = await cluster.trainer("tr", { onResult: (r) => void again.push(r) });
      await waitFor(() => again.length === 3, "the 3 unacknowledged results again");
      expect(new Set(again.map((r) => r.result_id))).toEqual(new Set(firstConnection.slice(2).map((r) => r.result_id)));
      second.dropConnection();
      await Bun.sleep(300);
      await second.ready();
      await Bun.sleep(200);
      expect(again.length).toBe(3);
    },
    T,
  );

  test(
    "a restarted coordinator loses nothing: queued work is dispatched, results streamed",
    async () => {
      cluster = await startCluster({ nodeGraceMs: 2_000 });
      const results: StreamedResult[] = [];
      const trainer = await cluster.trainer("tr", { autoAck: false, window: 100, onResult: (r) => void results.push(r) });
      await trainer.submit({ task: TASK, n: 6, agent: AGENT });
      // No node yet: everything is queued when the coordinator goes away.
      await cluster.restart();
      const node = await cluster.node("a", { capacity: { init: 1, run: 1, postrun: 1 } });
      await waitFor(() => results.length === 6, "6 results after the restart");
      expect(new Set(results.map((r) => r.result_id)).size).toBe(6);
      expect(node.received.length).toBe(6);
    },
    T,
  );

  test(
    "early stop: once k are usable the stragglers are cancelled on their nodes",
    async () => {
      cluster = await startCluster();
      const fastIds = new Set<string>();
      const node = await cluster.node("a", {
        capacity: { init: 2, run: 4, postrun: 2 },
        runMs: (a) => (fastIds.size < 2 && fastIds.add(a.rollout_id) ? 10 : 60_000),
      });
      const results: StreamedResult[] = [];
      const trainer = await cluster.trainer("tr", { onResult: (r) => void results.push(r) });
      await trainer.submit({ task: TASK, n: 4, agent: AGENT, early_stop_min_usable: 2 });
      await waitFor(() => results.length === 4, "2 completed and 2 cancelled");
      expect(results.filter((r) => r.status === "COMPLETED").length).toBe(2);
      expect(results.filter((r) => r.status === "CANCELLED").length).toBe(2);
      await waitFor(() => node.cancels.length === 2, "cancel frames on the node");
      expect(node.running.size).toBe(0);
    },
    T,
  );

  test(
    "a group naming an unknown harness is refused at submit, before any dispatch",
    async () => {
      cluster = await startCluster();
      const trainer = await cluster.trainer("tr");
      await expect(trainer.submit({ task: TASK, n: 2, agent: { harness: "copilot" } })).rejects.toThrow(/bad_request: unknown harness "copilot"/);
      expect((await trainer.submit({ task: TASK, n: 1, agent: { harness: "claude_code" } })).rollout_ids.length).toBe(1);
    },
    T,
  );

  test(
    "max_staleness: with `cancel` a rollout started too many versions ago is stopped on its node and run again; with `flag` its result says stale",
    async () => {
      cluster = await startCluster({ maxStaleness: 1, staleAction: "cancel" });
      const node = await cluster.node("a", { runMs: (a) => (a.attempt === 1 ? null : 5) });
      const results: StreamedResult[] = [];
      const trainer = await cluster.trainer("tr", { onResult: (r) => void results.push(r) });
      await trainer.submit({ task: TASK, n: 1, agent: AGENT });
      await waitFor(() => node.received.length === 1, "first attempt assigned");
      trainer.policy(2);
      await waitFor(() => results.length === 1, "the rerun's result");
      expect(node.cancels).toEqual([node.received[0]!.rollout_id]);
      expect(node.received.map((a) => a.attempt)).toEqual([1, 2]);
      expect(results[0]!.policy_version_started).toBe(2);
      expect(results[0]!.stale).toBe(false);
      await cluster.stop();

      cluster = await startCluster({ maxStaleness: 1, staleAction: "flag" });
      const held = await cluster.node("b", { runMs: () => null });
      const flagged: StreamedResult[] = [];
      const second = await cluster.trainer("tr2", { onResult: (r) => void flagged.push(r) });
      await second.submit({ task: TASK, n: 1, agent: AGENT });
      await waitFor(() => held.received.length === 1, "assigned");
      second.policy(3);
      await waitFor(async () => ((await (await cluster!.admin("/v1/admin/stats")).json()) as { policy_version: number }).policy_version === 3, "version 3");
      held.finishHeld();
      await waitFor(() => flagged.length === 1, "the stale result");
      expect(flagged[0]!.stale).toBe(true);
      expect(held.cancels).toEqual([]);
    },
    T,
  );

  test(
    "pause is answered only when every node has drained; resume carries the version",
    async () => {
      cluster = await startCluster();
      const a = await cluster.node("a");
      const b = await cluster.node("b");
      const trainer = await cluster.trainer("tr");
      const paused = await trainer.pause();
      expect(paused.nodes).toBe(2);
      expect(a.pauses + b.pauses).toBe(2);
      await trainer.resume(3);
      await waitFor(async () => ((await (await cluster!.admin("/v1/admin/stats")).json()) as { policy_version: number }).policy_version === 3, "version 3");
    },
    T,
  );

  test(
    "bad frames get error frames and a peer that keeps sending them is disconnected; wrong tokens are refused",
    async () => {
      cluster = await startCluster({ maxBadFrames: 3 });
      const refused = await fetch(`${cluster.coordinator.url}/v1/node`, { headers: { authorization: `Bearer ${TOKENS.trainerToken}`, upgrade: "websocket" } });
      expect(refused.status).toBe(401);
      const frames: { type: string; code?: string }[] = [];
      const ws = new (WebSocket as any)(`${cluster.coordinator.url.replace("http", "ws")}/v1/trainer`, {
        headers: { authorization: `Bearer ${TOKENS.trainerToken}` },
      }) as WebSocket;
      let closedWith = 0;
      ws.onmessage = (e) => void frames.push(JSON.parse(String(e.data)));
      ws.onclose = (e) => void (closedWith = e.code);
      await new Promise((r) => (ws.onopen = r));
      ws.send("not json");
      ws.send(JSON.stringify({ type: "credit", n: -1 }));
      ws.send(JSON.stringify({ type: "nope" }));
      await waitFor(() => closedWith !== 0, "disconnect after 3 bad frames");
      expect(closedWith).toBe(1008);
      expect(frames.filter((f) => f.type === "error" && f.code === "bad_request").length).toBe(3);
    },
    T,
  );
});
