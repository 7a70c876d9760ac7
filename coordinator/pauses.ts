// Why: weight sync across the cluster — `pause` reaches every connected node, and the trainer is
// answered only once each has drained its in-flight LLM calls (or gone away).
import type { NodeState } from "./node-states.ts";

interface PendingPause {
  waiting: Set<string>;
  done: (nodes: number) => void;
  nodes: number;
}

export class PauseBook {
  private readonly pending = new Map<string, PendingPause>();

  /** Sends `pause` to every connected node; `done` runs once all answered `paused`. */
  start(requestId: string, nodes: Iterable<Readonly<NodeState>>, done: (nodes: number) => void): void {
    const waiting = new Set<string>();
    for (const node of nodes) {
      if (!node.peer) continue;
      waiting.add(node.id);
      node.peer.send({ type: "pause", request_id: requestId });
    }
    const entry = { waiting, done, nodes: waiting.size };
    this.pending.set(requestId, entry);
    this.settle(requestId, entry);
  }

  drained(requestId: string, nodeId: string): void {
    const entry = this.pending.get(requestId);
    if (!entry) return;
    entry.waiting.delete(nodeId);
    this.settle(requestId, entry);
  }

  /** A node that left can no longer hold anyone up. */
  nodeGone(nodeId: string): void {
    for (const [id, entry] of this.pending) {
      entry.waiting.delete(nodeId);
      this.settle(id, entry);
    }
  }

  private settle(requestId: string, entry: PendingPause): void {
    if (entry.waiting.size > 0) return;
    this.pending.delete(requestId);
    entry.done(entry.nodes);
  }
}
