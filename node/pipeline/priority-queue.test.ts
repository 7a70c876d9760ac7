import { expect, test } from "bun:test";
import { PriorityQueue } from "./priority-queue.ts";

test("higher priority first, FIFO within a priority, removable anywhere", () => {
  const q = new PriorityQueue<string>();
  q.push("a0", 0);
  q.push("b50", 50);
  q.push("c0", 0);
  q.push("d100", 100);
  q.push("e50", 50);
  expect(q.values()).toEqual(["d100", "b50", "e50", "a0", "c0"]);
  expect(q.remove("e50")).toBe(true);
  expect(q.remove("zz")).toBe(false);
  expect(q.shift()).toBe("d100");
  expect(q.size).toBe(3);
});
