// Why: the gateway keeps per-session state in several places (sticky engine, token-splice
// turns, recent calls, next seq, session lookup); sessions that never close (open mode, crashed
// agents) must not grow memory without bound, so each of those maps is this one bounded LRU,
// bounded by its own entry count and, once it shares a CacheBudget, by the budget's bytes.
import type { BudgetCharge, CacheBudget } from "./cache-budget.ts";

interface Slot<V> {
  value: V;
  charge: BudgetCharge;
}

/** A Map that keeps at most `capacity` entries, dropping the least recently used first. */
export class LruMap<K, V> {
  private readonly entries = new Map<K, Slot<V>>();
  private budget: CacheBudget | undefined;

  /** `sizeOf` estimates an entry's bytes, for a shared CacheBudget (see `shareBudget`). */
  constructor(
    readonly capacity: number,
    private readonly sizeOf: (value: V, key: K) => number = () => 0,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`LruMap capacity must be a positive integer, got ${capacity}`);
  }

  /** Counts this map's entries against `budget` from now on (existing entries included). */
  shareBudget(budget: CacheBudget): void {
    for (const slot of this.entries.values()) this.budget?.release(slot.charge);
    this.budget = budget;
    for (const [key, slot] of [...this.entries]) budget.charge(slot.charge, this.sizeOf(slot.value, key));
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value, now marked most recently used. */
  get(key: K): V | undefined {
    const slot = this.entries.get(key);
    if (slot === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, slot);
    this.budget?.touch(slot.charge);
    return slot.value;
  }

  /** Stores (or re-measures, after the caller grew the value in place) an entry as most recently used. */
  set(key: K, value: V): this {
    this.delete(key);
    const slot: Slot<V> = {
      value,
      charge: {
        bytes: 0,
        evict: () => {
          if (this.entries.get(key) === slot) this.entries.delete(key);
        },
      },
    };
    this.entries.set(key, slot);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.delete(oldest.value);
    }
    this.budget?.charge(slot.charge, this.sizeOf(value, key));
    return this;
  }

  delete(key: K): boolean {
    const slot = this.entries.get(key);
    if (slot === undefined) return false;
    this.entries.delete(key);
    this.budget?.release(slot.charge);
    return true;
  }

  /** Entries from least to most recently used (iteration does not change the order). */
  *[Symbol.iterator](): IterableIterator<[K, V]> {
    for (const [key, slot] of this.entries) yield [key, slot.value];
  }
}
