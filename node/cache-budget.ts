// Why: the gateway keeps per-session state in several caches (recent calls and prefix bases,
// token-splice turns, next seq, session lookup, sticky engine). Bounding each by a session count
// still lets a few long contexts take gigabytes, so they share one budget in bytes: whichever
// cache adds an entry, the least recently used entries of all of them go first. Everything in
// these caches can be rebuilt (from the store) or is only an optimisation, so eviction is safe.

/** One cached entry's claim on the budget; `evict` removes the entry from its cache. */
export interface BudgetCharge {
  bytes: number;
  evict(): void;
}

/**
 * 64 MiB: the recent contexts of 32 sessions at 100 KB (~1.1 MiB each, estimated) with room to
 * spare; under gateway-memory.ts's load of sessions that never close, it is what keeps the
 * gateway's peak RSS under 256 MiB (bench/RESULTS.md, "Gateway memory"). Raise it with the number
 * of sessions making calls at once times their context.
 */
export const DEFAULT_CACHE_BYTES = 64 * 1024 * 1024;

export class CacheBudget {
  /** Charges from least to most recently used (a Set keeps insertion order). */
  private readonly charges = new Set<BudgetCharge>();
  private used = 0;

  constructor(readonly maxBytes: number = DEFAULT_CACHE_BYTES) {
    if (!Number.isFinite(maxBytes) || maxBytes < 0) throw new Error(`cache budget must be a non-negative number of bytes, got ${maxBytes}`);
  }

  /** Bytes the caches hold now (estimated as they were added). */
  get usedBytes(): number {
    return this.used;
  }

  get entries(): number {
    return this.charges.size;
  }

  /** Adds or re-measures an entry as most recently used, then evicts the oldest until within budget. */
  charge(charge: BudgetCharge, bytes: number): void {
    if (this.charges.delete(charge)) this.used -= charge.bytes;
    charge.bytes = bytes;
    this.charges.add(charge);
    this.used += bytes;
    for (const oldest of this.charges) {
      if (this.used <= this.maxBytes) break;
      this.release(oldest);
      oldest.evict();
    }
  }

  /** Marks an entry most recently used. */
  touch(charge: BudgetCharge): void {
    if (this.charges.delete(charge)) this.charges.add(charge);
  }

  /** The entry left its cache (deleted or evicted by the cache itself). */
  release(charge: BudgetCharge): void {
    if (this.charges.delete(charge)) this.used -= charge.bytes;
  }
}

const stringBytes = (s: string): number => 40 + 2 * s.length;
const arraySlots = (length: number): number => 32 + 8 * length;

/**
 * A parsed JSON value's estimated heap bytes, walked without serialising it (a string's length is
 * O(1), so this costs one step per node, not per character).
 */
function jsonBytes(value: unknown): number {
  if (typeof value === "string") return stringBytes(value);
  if (Array.isArray(value)) return value.reduce((sum: number, v) => sum + jsonBytes(v), arraySlots(value.length));
  if (value !== null && typeof value === "object") {
    let sum = 64;
    for (const key in value) sum += 16 + 2 * key.length + jsonBytes((value as Record<string, unknown>)[key]);
    return sum;
  }
  return 0; // numbers, booleans and null sit in their slot
}

/** Estimated heap bytes of values the caches hold (JSC: 2 bytes a UTF-16 char, 8 a number slot). */
export const heapBytes = {
  string: stringBytes,
  numbers: (a: readonly number[] | null | undefined): number => (a ? arraySlots(a.length) : 0),
  /** An array's own bytes (its slots), without what the slots point at. */
  slots: (length: number): number => arraySlots(length),
  json: jsonBytes,
  /** A map entry's own overhead (node, key slot, small wrapper object). */
  entry: 96,
};
