// Placement: the default policy (least loaded, warm image first) on its own, and a policy of
// one's own plugged into a running coordinator over real WebSockets.
import { afterEach, describe, expect, test } from "bun:test";
import { LeastLoaded, leastLoadedWarmFirst } from "./least-loaded-policy.ts";
import { RolloutQueue } from "./queue.ts";
import type { SchedulingNode, SchedulingPolicy } from "./scheduling.ts";
import { AGENT, startCluster, TASK, waitFor, type Cluster } from "../test/support/coordinator/cluster.ts";

const node = (id: string, assigned: number, slots = 4, warm: string[] = []): SchedulingNode => ({ id, slots, assigned, warmImages: new Set(warm) });

let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

describe("least loaded, warm image first", () => {
  test("the heap orders nodes by load ratio and leaves full ones out", () => {
    const heap = new LeastLoaded([node("busy", 3), node("idle", 0), node("half", 2), node("full", 4)]);
    expect([heap.pop()?.node.id, heap.pop()?.node.id, heap.pop()?.node.id, heap.pop()]).toEqual(["idle", "half", "busy", undefined]);
  });

  test("spreads by load, never above a node's slots, and gives a node the image it has warm", () => {
    const queue = new RolloutQueue();
    for (let i = 0; i < 6; i++) queue.push({ id: `cold-${i}`, image: "cold", priority: 0, seq: i });
    queue.push({ id: "warm-0", image: "warm", priority: 0, seq: 10 });
    const placements = leastLoadedWarmFirst.place(queue, [node("a", 0, 2, ["warm"]), node("b", 1, 4)], 100);
    const on = (id: string) => placements.filter((p) => p.nodeId === id).map((p) => p.rolloutId);
    expect(on("a")).toHaveLength(2);
    expect(on("a")).toContain("warm-0");
    expect(on("b")).toHaveLength(3);
    expect(queue.size).toBe(2);
  });
});

describe("a policy of one's own", () => {
  test("a coordinator places by the policy it is given; what a policy takes and does not place goes back to the queue", async () => {
    const rounds: number[] = [];
    // Everything on node "b", one rollout per round, though it takes two from the queue.
    const pinned: SchedulingPolicy = {
      name: "pin-to-b",
      place(queue, nodes) {
        const b = nodes.find((n) => n.id === "b");
        const first = queue.take();
        queue.take();
        rounds.push(queue.size);
        return b && first ? [{ rolloutId: first.id, nodeId: b.id }] : [];
      },
    };
    cluster = await startCluster({}, { policy: pinned });
    const a = await cluster.node("a", { capacity: { init: 4, run: 4, postrun: 4 } });
    const b = await cluster.node("b", { capacity: { init: 1, run: 1, postrun: 1 } });
    const results: unknown[] = [];
    const trainer = await cluster.trainer("tr", { onResult: (r) => void results.push(r) });
    const { rollout_ids } = await trainer.submit({ task: TASK, n: 5, agent: AGENT });
    await waitFor(() => results.length === 5, "5 results");
    expect(a.received).toHaveLength(0);
    expect(new Set(b.received.map((x) => x.rollout_id))).toEqual(new Set(rollout_ids));
    expect(rounds.length).toBeGreaterThanOrEqual(5);
  }, 60_000);
});
