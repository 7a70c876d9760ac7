import { describe, expect, test } from "bun:test";
import { RolloutQueue } from "./queue.ts";

describe("RolloutQueue", () => {
  test("highest priority first, FIFO within a priority", () => {
    const q = new RolloutQueue();
    q.push({ id: "a", image: "x", priority: 0, seq: 1 });
    q.push({ id: "b", image: "x", priority: 50, seq: 2 });
    q.push({ id: "c", image: "y", priority: 50, seq: 3 });
    q.push({ id: "d", image: "x", priority: 0, seq: 4 });
    expect([q.take(undefined)?.id, q.take(undefined)?.id, q.take(undefined)?.id, q.take(undefined)?.id, q.take(undefined)]).toEqual([
      "b",
      "c",
      "a",
      "d",
      undefined,
    ]);
  });

  test("a warm image wins within the top priority, never over a higher priority", () => {
    const q = new RolloutQueue();
    q.push({ id: "old", image: "cold", priority: 10, seq: 1 });
    q.push({ id: "warm", image: "hot", priority: 10, seq: 2 });
    q.push({ id: "low-warm", image: "hot", priority: 0, seq: 0 });
    expect(q.take(new Set(["hot"]))?.id).toBe("warm");
    expect(q.take(new Set(["hot"]))?.id).toBe("old");
    expect(q.take(new Set(["hot"]))?.id).toBe("low-warm");
  });

  test("removed rollouts are skipped and demand counts only live ones", () => {
    const q = new RolloutQueue();
    for (let i = 0; i < 5; i++) q.push({ id: `r${i}`, image: i % 2 ? "a" : "b", priority: 0, seq: i });
    expect(q.remove("r0")).toBe(true);
    expect(q.remove("r0")).toBe(false);
    expect(q.demandByImage()).toEqual({ a: 2, b: 2 });
    expect(q.size).toBe(4);
    expect(q.take(undefined)?.id).toBe("r1");
  });

  test("stays correct across compaction of a long FIFO", () => {
    const q = new RolloutQueue();
    for (let i = 0; i < 5000; i++) q.push({ id: `r${i}`, image: "x", priority: 0, seq: i });
    const taken: string[] = [];
    for (let i = 0; i < 5000; i++) taken.push(q.take(undefined)!.id);
    expect(taken[0]).toBe("r0");
    expect(taken[4999]).toBe("r4999");
    expect(new Set(taken).size).toBe(5000);
    expect(q.size).toBe(0);
  });
});
