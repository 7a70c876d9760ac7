import { describe, expect, test } from "bun:test";
import { LruMap } from "./lru-map.ts";

describe("LruMap", () => {
  test("drops the least recently used entry past capacity; get refreshes an entry", () => {
    const lru = new LruMap<string, number>(2);
    lru.set("a", 1).set("b", 2);
    expect(lru.get("a")).toBe(1); // a is now newest
    lru.set("c", 3);
    expect([...lru].map(([k]) => k)).toEqual(["a", "c"]);
    expect(lru.get("b")).toBeUndefined();
    expect(lru.size).toBe(2);
  });

  test("re-setting a key refreshes it; delete removes it; capacity must be positive", () => {
    const lru = new LruMap<string, number>(2);
    lru.set("a", 1).set("b", 2).set("a", 10).set("c", 3);
    expect([...lru]).toEqual([
      ["a", 10],
      ["c", 3],
    ]);
    expect(lru.delete("a")).toBe(true);
    expect(lru.size).toBe(1);
    expect(() => new LruMap(0)).toThrow("positive integer");
  });
});
