// Why: the process's RSS is live data plus garbage not yet collected plus the freed pages the
// allocator still keeps (a second's worth, allocator-options.ts). A gateway call's bodies live
// across the engine call, so JSC's generational collector promotes what they hold and frees it
// only at a full collection, which it runs rarely while the live heap is small: a busy gateway's
// heap swung between 34 and 135 MiB, a full collection leaving ~30 MiB (bench/RESULTS.md,
// "Gateway memory"). Looking every 100 ms, a full collection runs once the heap grew by half of
// what the last one left (16 MiB at least): how often follows how fast garbage comes, and each
// collection's work (proportional to what survives) is paid for by at least half as many bytes
// of garbage, so its CPU stays a small, bounded share; an idle process is never collected.
import { heapSize } from "bun:jsc";
import { UsageError } from "./cli-args.ts";

export const FULL_GC_ENV = "POLAR_FULL_GC_MS";
const DEFAULT_INTERVAL_MS = 100;
/** Heap growth since the last full collection below which nothing is done, whatever survived it. */
const MIN_GROWTH_BYTES = 16 * 1024 * 1024;
/** ... and as a share of what survived it. */
const GROWTH_SHARE = 0.5;

/** The pacing interval `POLAR_FULL_GC_MS` asks for (0: off); throws on anything but a non-negative integer. */
export function fullGcIntervalMs(env: Record<string, string | undefined> = process.env): number {
  const raw = env[FULL_GC_ENV];
  if (raw === undefined || raw === "") return DEFAULT_INTERVAL_MS;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new UsageError(`${FULL_GC_ENV} must be a whole number of milliseconds (0: off), got ${JSON.stringify(raw)}`);
  return value;
}

export interface Collector {
  /** The JS heap's size in bytes (bun:jsc, ~0.5 µs). */
  heapSize(): number;
  /** A full, synchronous collection. */
  collect(): void;
}

const JSC: Collector = { heapSize, collect: () => Bun.gc(true) };

/** Starts pacing full collections for this process; returns the function that stops it (undefined when off). */
export function paceFullCollections(intervalMs = fullGcIntervalMs(), collector: Collector = JSC): (() => void) | undefined {
  if (intervalMs === 0) return undefined;
  let afterLast = collector.heapSize();
  const timer = setInterval(() => {
    if (collector.heapSize() - afterLast < Math.max(MIN_GROWTH_BYTES, afterLast * GROWTH_SHARE)) return;
    collector.collect();
    afterLast = collector.heapSize();
  }, intervalMs);
  timer.unref(); // never what keeps the process alive
  return () => clearInterval(timer);
}
