// Why: who enters INIT next is decided by dispatch priority (0–100, higher first) and, within a
// priority, by arrival; a small stable queue keeps that rule in one place.

export class PriorityQueue<T> {
  private readonly items: { value: T; priority: number; order: number }[] = [];
  private arrivals = 0;

  get size(): number {
    return this.items.length;
  }

  push(value: T, priority: number): void {
    const entry = { value, priority, order: this.arrivals++ };
    // Insert after every entry of a higher or equal priority (FIFO within a priority).
    let at = this.items.findIndex((e) => e.priority < priority);
    if (at < 0) at = this.items.length;
    this.items.splice(at, 0, entry);
  }

  shift(): T | undefined {
    return this.items.shift()?.value;
  }

  /** Removes a value wherever it waits; true when it was there. */
  remove(value: T): boolean {
    const at = this.items.findIndex((e) => e.value === value);
    if (at < 0) return false;
    this.items.splice(at, 1);
    return true;
  }

  values(): T[] {
    return this.items.map((e) => e.value);
  }
}
