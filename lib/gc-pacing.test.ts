// Full collections are paced only when asked (POLAR_FULL_GC_MS, 0 = off) and only after the heap
// grew by 16 MiB since the last one: a busy process is collected once per interval, an idle one
// never (a stand-in collector records what the pacer does; the real one is JSC's).
import { expect, test } from "bun:test";
import { UsageError } from "./cli-args.ts";
import { fullGcIntervalMs, paceFullCollections } from "./gc-pacing.ts";

const MiB = 1024 * 1024;

test("POLAR_FULL_GC_MS: default once a second, 0 turns pacing off, anything else is refused by name", () => {
  expect(fullGcIntervalMs({})).toBe(1000);
  expect(fullGcIntervalMs({ POLAR_FULL_GC_MS: "250" })).toBe(250);
  expect(fullGcIntervalMs({ POLAR_FULL_GC_MS: "0" })).toBe(0);
  expect(paceFullCollections(0)).toBeUndefined();
  for (const bad of ["-1", "1.5", "soon"]) expect(() => fullGcIntervalMs({ POLAR_FULL_GC_MS: bad })).toThrow(UsageError);
  expect(() => fullGcIntervalMs({ POLAR_FULL_GC_MS: "soon" })).toThrow(/POLAR_FULL_GC_MS/);
});

test("collects after the heap grew by 16 MiB, then not again until it grows again", async () => {
  let heap = 40 * MiB;
  const collections: number[] = [];
  const stop = paceFullCollections(5, {
    heapSize: () => heap,
    collect: () => {
      collections.push(heap);
      heap = 42 * MiB; // what survived
    },
  })!;
  const ticks = async (n: number) => Bun.sleep(5 * n + 50);
  try {
    heap = 50 * MiB; // grew by 10 MiB: not enough
    await ticks(10);
    expect(collections).toEqual([]);
    heap = 57 * MiB; // 17 MiB above the start
    for (let i = 0; i < 200 && collections.length === 0; i++) await ticks(1);
    expect(collections).toEqual([57 * MiB]);
    await ticks(10); // idle after it: nothing more
    expect(collections).toEqual([57 * MiB]);
    heap = 60 * MiB; // 18 MiB above what survived
    for (let i = 0; i < 200 && collections.length === 1; i++) await ticks(1);
    expect(collections).toEqual([57 * MiB, 60 * MiB]);
  } finally {
    stop();
  }
}, 30_000);
