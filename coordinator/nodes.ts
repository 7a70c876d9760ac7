// Why: the coordinator's view of each node agent — connection, capacity, load, warm images and
// the rollouts it holds — and the choice of where the next rollout goes: least loaded first,
// never above capacity, never to a draining or disconnected node.
import type { CoordinatorToNode, NodeHello, StageCapacity, StageLoad } from "../protocol/node-link.ts";

export interface NodePeer {
  send(message: CoordinatorToNode): void;
  close(code: number, reason: string): void;
}

export const NODE_STATES = ["connected", "disconnected", "draining"] as const;

export interface NodeState {
  id: string;
  peer: NodePeer | null;
  info: Omit<NodeHello, "type" | "held"> | null;
  capacity: StageCapacity;
  /** Rollouts assigned here and not yet finished (by this coordinator's book). */
  assigned: Set<string>;
  warm: Set<string>;
  load: StageLoad | null;
  draining: boolean;
  lastSeen: number;
  /** Gateway call latency reported in heartbeats, summed since connect. */
  gatewayCalls: number;
  gatewayTotalMs: number;
  graceTimer: ReturnType<typeof setTimeout> | null;
}

/** Sessions a node runs at once across its stages (Polar's init + run + postrun workers). */
export function slots(capacity: StageCapacity): number {
  return capacity.init + capacity.run + capacity.postrun;
}

export function nodeStatus(node: NodeState): (typeof NODE_STATES)[number] {
  if (!node.peer) return "disconnected";
  return node.draining ? "draining" : "connected";
}

/** A binary min-heap of nodes by load ratio, rebuilt per dispatch round. */
export class LeastLoaded {
  private readonly heap: NodeState[] = [];

  constructor(nodes: Iterable<NodeState>) {
    for (const node of nodes) if (LeastLoaded.accepts(node)) this.push(node);
  }

  static accepts(node: NodeState): boolean {
    return node.peer !== null && !node.draining && node.assigned.size < slots(node.capacity);
  }

  private static ratio(node: NodeState): number {
    return node.assigned.size / slots(node.capacity);
  }

  pop(): NodeState | undefined {
    const top = this.heap[0];
    const last = this.heap.pop();
    if (top === undefined || last === undefined) return undefined;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.down(0);
    }
    return top;
  }

  push(node: NodeState): void {
    this.heap.push(node);
    let i = this.heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (LeastLoaded.ratio(this.heap[parent]!) <= LeastLoaded.ratio(this.heap[i]!)) break;
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
      if (l < n && LeastLoaded.ratio(this.heap[l]!) < LeastLoaded.ratio(this.heap[smallest]!)) smallest = l;
      if (r < n && LeastLoaded.ratio(this.heap[r]!) < LeastLoaded.ratio(this.heap[smallest]!)) smallest = r;
      if (smallest === i) return;
      [this.heap[smallest], this.heap[i]] = [this.heap[i]!, this.heap[smallest]!];
      i = smallest;
    }
  }
}

export function newNodeState(id: string, now: number): NodeState {
  return {
    id,
    peer: null,
    info: null,
    capacity: { init: 1, run: 1, postrun: 1 },
    assigned: new Set(),
    warm: new Set(),
    load: null,
    draining: false,
    lastSeen: now,
    gatewayCalls: 0,
    gatewayTotalMs: 0,
    graceTimer: null,
  };
}
