// Why: who runs next is decided here — highest priority first, FIFO within a priority — with one
// twist the cluster needs: a node with a warm sandbox for an image gets that image's oldest
// rollout of the top priority, so prewarmed sandboxes are used instead of cold-started.

export interface QueuedRollout {
  id: string;
  image: string;
  priority: number;
  /** Submission order. */
  seq: number;
}

/** A FIFO with O(1) push and shift (a head index, compacted now and then). */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  peek(): T | undefined {
    return this.items[this.head];
  }

  shift(): T | undefined {
    const item = this.items[this.head];
    if (item === undefined) return undefined;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}

export class RolloutQueue {
  /** priority → image → FIFO; entries whose id was removed are skipped lazily. */
  private readonly buckets = new Map<number, Map<string, Fifo<QueuedRollout>>>();
  private readonly live = new Set<string>();

  get size(): number {
    return this.live.size;
  }

  has(id: string): boolean {
    return this.live.has(id);
  }

  push(item: QueuedRollout): void {
    if (this.live.has(item.id)) return;
    this.live.add(item.id);
    let byImage = this.buckets.get(item.priority);
    if (!byImage) this.buckets.set(item.priority, (byImage = new Map()));
    let fifo = byImage.get(item.image);
    if (!fifo) byImage.set(item.image, (fifo = new Fifo()));
    fifo.push(item);
  }

  /** Forgets a queued rollout (cancelled); returns whether it was queued. */
  remove(id: string): boolean {
    return this.live.delete(id);
  }

  /** Queued rollouts per image (demand the nodes' pools may prewarm for). */
  demandByImage(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const byImage of this.buckets.values()) {
      for (const [image, fifo] of byImage) {
        this.dropDead(fifo);
        if (fifo.size > 0) out[image] = (out[image] ?? 0) + fifo.size;
      }
    }
    return out;
  }

  /** The next rollout for a node: top priority; among its images a warm one, else the oldest. */
  take(warmImages: ReadonlySet<string> | undefined): QueuedRollout | undefined {
    const priorities = [...this.buckets.keys()].sort((a, b) => b - a);
    for (const priority of priorities) {
      const byImage = this.buckets.get(priority)!;
      let oldest: Fifo<QueuedRollout> | undefined;
      let warm: Fifo<QueuedRollout> | undefined;
      for (const [image, fifo] of byImage) {
        const head = this.dropDead(fifo);
        if (!head) {
          byImage.delete(image);
          continue;
        }
        if (!oldest || head.seq < oldest.peek()!.seq) oldest = fifo;
        if (warmImages?.has(image) && (!warm || head.seq < warm.peek()!.seq)) warm = fifo;
      }
      if (byImage.size === 0) {
        this.buckets.delete(priority);
        continue;
      }
      const item = (warm ?? oldest)!.shift()!;
      this.live.delete(item.id);
      return item;
    }
    return undefined;
  }

  private dropDead(fifo: Fifo<QueuedRollout>): QueuedRollout | undefined {
    while (fifo.size > 0 && !this.live.has(fifo.peek()!.id)) fifo.shift();
    return fifo.peek();
  }
}
