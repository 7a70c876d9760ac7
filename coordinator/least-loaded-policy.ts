// Why: the default placement — the least loaded node (assigned / slots) gets the next rollout,
// and from the queue's top priority it gets one whose image it has warm before older ones of
// other images, so prewarmed sandboxes are used instead of cold-started.
import type { Placement, SchedulingNode, SchedulingPolicy, SchedulingQueue } from "./scheduling.ts";

interface Loaded {
  node: SchedulingNode;
  assigned: number;
}

const ratio = (n: Loaded) => n.assigned / n.node.slots;

/** A binary min-heap of nodes by load ratio, built per dispatch round. */
export class LeastLoaded {
  private readonly heap: Loaded[] = [];

  constructor(nodes: Iterable<SchedulingNode>) {
    for (const node of nodes) if (node.assigned < node.slots) this.push({ node, assigned: node.assigned });
  }

  pop(): Loaded | undefined {
    const top = this.heap[0];
    const last = this.heap.pop();
    if (top === undefined || last === undefined) return undefined;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.down(0);
    }
    return top;
  }

  push(entry: Loaded): void {
    this.heap.push(entry);
    let i = this.heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (ratio(this.heap[parent]!) <= ratio(this.heap[i]!)) break;
      [this.heap[parent], this.heap[i]] = [this.heap[i]!, this.heap[parent]!];
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.heap.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let smallest = i;
      if (l < n && ratio(this.heap[l]!) < ratio(this.heap[smallest]!)) smallest = l;
      if (r < n && ratio(this.heap[r]!) < ratio(this.heap[smallest]!)) smallest = r;
      if (smallest === i) return;
      [this.heap[smallest], this.heap[i]] = [this.heap[i]!, this.heap[smallest]!];
      i = smallest;
    }
  }
}

export const leastLoadedWarmFirst: SchedulingPolicy = {
  name: "least-loaded-warm-first",
  place(queue: SchedulingQueue, nodes: readonly SchedulingNode[], max: number): Placement[] {
    const placements: Placement[] = [];
    if (queue.size === 0) return placements;
    const heap = new LeastLoaded(nodes);
    while (placements.length < max) {
      const entry = heap.pop();
      if (!entry) break;
      const item = queue.take(entry.node.warmImages);
      if (!item) break;
      placements.push({ rolloutId: item.id, nodeId: entry.node.id });
      entry.assigned++;
      if (entry.assigned < entry.node.slots) heap.push(entry);
    }
    return placements;
  },
};
