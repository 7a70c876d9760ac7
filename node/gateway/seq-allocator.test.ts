import { describe, expect, test } from "bun:test";
import { SeqAllocator } from "./seq-allocator.ts";

describe("SeqAllocator", () => {
  test("numbers continue from the store and stay distinct while calls overlap", async () => {
    let reads = 0;
    const seqs = new SeqAllocator(async () => {
      reads++;
      return 4;
    });
    const a = seqs.allocate("s");
    const b = seqs.allocate("s");
    expect(await Promise.all([a, b])).toEqual([5, 6]);
    seqs.release("s");
    expect(await seqs.allocate("s")).toBe(7); // still one in flight: same chain
    seqs.release("s");
    seqs.release("s");
    await Bun.sleep(0);
    expect(await seqs.allocate("s")).toBe(8); // idle entry reused, no new store read
    expect(reads).toBe(1);
  });

  test("an idle session evicted from the LRU is read from the store again", async () => {
    const stored = new Map([
      ["a", 10],
      ["b", 20],
    ]);
    const seqs = new SeqAllocator(async (id) => stored.get(id) ?? -1, 1);
    expect(await seqs.allocate("a")).toBe(11);
    seqs.release("a");
    stored.set("a", 11); // the call was stored
    expect(await seqs.allocate("b")).toBe(21);
    seqs.release("b");
    await Bun.sleep(0);
    expect(await seqs.allocate("a")).toBe(12);
  });

  test("a failed store read does not poison the session", async () => {
    let fail = true;
    const seqs = new SeqAllocator(async () => {
      if (fail) throw new Error("disk gone");
      return 0;
    });
    await expect(seqs.allocate("s")).rejects.toThrow("disk gone");
    seqs.release("s");
    fail = false;
    await Bun.sleep(0);
    expect(await seqs.allocate("s")).toBe(1);
  });
});
