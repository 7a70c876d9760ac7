import { describe, expect, test } from "bun:test";
import { LeastLoaded, newNodeState, type NodeState } from "./nodes.ts";

const node = (id: string, assigned: number, run = 2, extra: Partial<NodeState> = {}): NodeState => {
  const n = newNodeState(id, 0);
  n.peer = { send() {}, close() {} };
  n.capacity = { init: 1, run, postrun: 1 };
  for (let i = 0; i < assigned; i++) n.assigned.add(`${id}-${i}`);
  return Object.assign(n, extra);
};

describe("LeastLoaded", () => {
  test("orders by load ratio and leaves out full, draining and disconnected nodes", () => {
    const heap = new LeastLoaded([node("busy", 3), node("idle", 0), node("half", 2, 2), node("full", 4), node("drain", 0, 2, { draining: true }), node("gone", 0, 2, { peer: null })]);
    expect([heap.pop()?.id, heap.pop()?.id, heap.pop()?.id, heap.pop()]).toEqual(["idle", "half", "busy", undefined]);
  });

  test("a node pushed back after an assignment takes its new place", () => {
    const a = node("a", 0);
    const b = node("b", 1);
    const heap = new LeastLoaded([a, b]);
    const first = heap.pop()!;
    first.assigned.add("x");
    first.assigned.add("y");
    heap.push(first);
    expect(heap.pop()?.id).toBe("b");
  });
});
