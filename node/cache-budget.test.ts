import { describe, expect, test } from "bun:test";
import { CacheBudget, heapBytes } from "./cache-budget.ts";
import { LruMap } from "./lru-map.ts";

const byLength = (value: string) => value.length;

describe("CacheBudget shared by LruMaps", () => {
  test("the least recently used entry of any map goes first once the bytes are over budget", () => {
    const budget = new CacheBudget(100);
    const calls = new LruMap<string, string>(1_000, byLength);
    const turns = new LruMap<string, string>(1_000, byLength);
    calls.shareBudget(budget);
    turns.shareBudget(budget);
    calls.set("s1", "x".repeat(40));
    turns.set("s1", "y".repeat(40));
    expect(budget.usedBytes).toBe(80);
    expect(calls.get("s1")).toHaveLength(40); // s1's calls are now newer than s1's turns
    turns.set("s2", "z".repeat(30));
    // 110 > 100: the oldest entry overall (turns s1) was evicted, not the newest one.
    expect([...turns].map(([k]) => k)).toEqual(["s2"]);
    expect([...calls].map(([k]) => k)).toEqual(["s1"]);
    expect(budget.usedBytes).toBe(70);
    expect(budget.entries).toBe(2);
  });

  test("re-setting an entry re-measures it; delete and a map's own capacity release its bytes", () => {
    const budget = new CacheBudget(1_000);
    const lru = new LruMap<string, string[]>(2, (list) => list.join("").length);
    lru.shareBudget(budget);
    const list = ["aaaa"];
    lru.set("a", list);
    list.push("bbbb");
    lru.set("a", list);
    expect(budget.usedBytes).toBe(8);
    lru.set("b", ["cc"]).set("c", ["d"]); // capacity 2: "a" goes
    expect(budget.usedBytes).toBe(3);
    lru.delete("b");
    expect([budget.usedBytes, budget.entries]).toEqual([1, 1]);
  });

  test("an entry bigger than the whole budget is not kept; a zero budget caches nothing", () => {
    const budget = new CacheBudget(10);
    const lru = new LruMap<string, string>(10, byLength);
    lru.shareBudget(budget);
    lru.set("small", "12345");
    lru.set("huge", "x".repeat(11));
    expect(lru.get("huge")).toBeUndefined();
    expect(lru.get("small")).toBeUndefined(); // evicted first, being older
    expect(budget.usedBytes).toBe(0);
    const none = new LruMap<string, string>(10, byLength);
    none.shareBudget(new CacheBudget(0));
    none.set("k", "v");
    expect(none.size).toBe(0);
  });

  test("entries already in a map are charged when it starts sharing a budget", () => {
    const lru = new LruMap<string, string>(10, byLength);
    lru.set("a", "x".repeat(6)).set("b", "y".repeat(6));
    const budget = new CacheBudget(10);
    lru.shareBudget(budget);
    expect([...lru].map(([k]) => k)).toEqual(["b"]);
    expect(budget.usedBytes).toBe(6);
  });
});

describe("heapBytes.json", () => {
  test("estimates a parsed value from its strings, keys and slots, without serialising it", () => {
    expect(heapBytes.json("abcd")).toBe(heapBytes.string("abcd"));
    expect(heapBytes.json([1, true, null])).toBe(32 + 3 * 8);
    expect(heapBytes.json({ role: "user" })).toBe(64 + 16 + 2 * "role".length + heapBytes.string("user"));
    const message = { role: "assistant", content: "x".repeat(1_000), tool_calls: [{ id: "c1", name: "bash", arguments: '{"command":"ls"}' }] };
    // Dominated by the text, at 2 bytes a UTF-16 char.
    expect(heapBytes.json([message])).toBeGreaterThan(2 * JSON.stringify(message).length);
    expect(heapBytes.json([message])).toBeLessThan(2 * JSON.stringify(message).length + 1_000);
  });
});
