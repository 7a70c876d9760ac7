// Full collections are paced (POLAR_FULL_GC_MS, 0 = off) and run only after the heap grew by half
// of what the last one left, 16 MiB at least: a busy process is collected as often as its garbage
// comes, an idle one never (a stand-in collector records what the pacer does; the real one is JSC's).
import { expect, test } from "bun:test";
import { UsageError } from "./cli-args.ts";
import { fullGcIntervalMs, paceFullCollections } from "./gc-pacing.ts";

const MiB = 1024 * 1024;

test("POLAR_FULL_GC_MS: default a look every 100 ms, 0 turns pacing off, anything else is refused by name", () => {
  expect(fullGcIntervalMs({})).toBe(100);
  expect(fullGcIntervalMs({ POLAR_FULL_GC_MS: "250" })).toBe(250);
  expect(fullGcIntervalMs({ POLAR_FULL_GC_MS: "0" })).toBe(0);
  expect(paceFullCollections(0)).toBeUndefined();
  for (const bad of ["-1", "1.5", "soon"]) expect(() => fullGcIntervalMs({ POLAR_FULL_GC_MS: bad })).toThrow(UsageError);
  expect(() => fullGcIntervalMs({ POLAR_FULL_GC_MS: "soon" })).toThrow(/POLAR_FULL_GC_MS/);
});

test("collects once the heap grew by half of what the last collection left, 16 MiB at least; an idle heap never", async () => {
  let heap = 40 * MiB;
  let survivors = 42 * MiB;
  const collections: number[] = [];
  const stop = paceFullCollections(5, {
    heapSize: () => heap,
    collect: () => {
      collections.push(heap);
      heap = survivors;
    },
  })!;
  const ticks = async (n: number) => Bun.sleep(5 * n + 50);
  const untilCollections = async (n: number) => {
    for (let i = 0; i < 200 && collections.length < n; i++) await ticks(1);
  };
  try {
    heap = 57 * MiB; // grew by 17 MiB: more than 16, less than half of 40
    await ticks(10);
    expect(collections).toEqual([]);
    heap = 61 * MiB; // 21 MiB: more than half of 40
    await untilCollections(1);
    expect(collections).toEqual([61 * MiB]);
    await ticks(10); // idle after it: nothing more
    expect(collections).toEqual([61 * MiB]);
    survivors = 8 * MiB;
    heap = 64 * MiB; // 22 MiB above the 42 that survived
    await untilCollections(2);
    expect(collections).toEqual([61 * MiB, 64 * MiB]);
    heap = 20 * MiB; // a small heap: 12 MiB above 8 is below the 16 MiB floor
    await ticks(10);
    expect(collections).toHaveLength(2);
    heap = 25 * MiB; // 17 MiB above 8
    await untilCollections(3);
    expect(collections).toEqual([61 * MiB, 64 * MiB, 25 * MiB]);
  } finally {
    stop();
  }
}, 30_000);
