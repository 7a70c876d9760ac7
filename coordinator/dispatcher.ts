// Why: dispatch is one loop — ask the scheduling policy for placements, move the rollouts to
// `assigned`, store the round in one write, and only then send each node its assignments — run
// at most once at a time and again whenever something changed meanwhile.
import type { Assignment } from "../protocol/node-link.ts";
import type { CoordinatorCore } from "./core.ts";
import { acceptsWork, slots, type NodeState } from "./node-states.ts";
import type { QueuedRollout } from "./queue.ts";
import type { LiveRollout } from "./rollout-states.ts";
import type { SchedulingNode, SchedulingPolicy, SchedulingQueue } from "./scheduling.ts";

/** Placements per round (and per store write). */
export const DISPATCH_BATCH = 4096;

interface Dispatched {
  rollout: LiveRollout;
  node: NodeState;
  attempt: number;
}

export class Dispatcher {
  private scheduled = false;
  private running = false;
  private again = false;

  constructor(
    private readonly core: CoordinatorCore,
    private readonly policy: SchedulingPolicy,
  ) {}

  /** Dispatches soon (once per microtask, however often asked). */
  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      void this.run();
    });
  }

  private async run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    const c = this.core;
    try {
      do {
        this.again = false;
        const batch = this.pick();
        if (batch.length === 0) continue;
        const version = c.policyVersion();
        await c.persist(() =>
          c.repo.assign(
            batch.map((d) => ({ rolloutId: d.rollout.id, nodeId: d.node.id, attempt: d.attempt, policyVersion: version })),
            c.now(),
          ),
        );
        for (const { rollout, node, attempt } of batch) {
          // Cancelled or reassigned while the round was being written: nothing to send.
          if (rollout.state !== "ASSIGNED" || rollout.attempt !== attempt || rollout.nodeId !== node.id || !node.peer) continue;
          node.peer.send({ type: "assign", assignment: this.assignmentFor(rollout) });
          c.events.emit("rollout.dispatched", {
            rollout_id: rollout.id,
            group_id: rollout.groupId,
            node_id: node.id,
            attempt,
            policy_version: version,
            at: c.now(),
          });
        }
        if (batch.length === DISPATCH_BATCH) this.again = true;
      } while (this.again);
    } finally {
      this.running = false;
    }
  }

  /** One round of placements, applied in memory (the store write follows). */
  private pick(): Dispatched[] {
    const c = this.core;
    const queue = c.rollouts.queue;
    if (queue.size === 0) return [];
    const open: NodeState[] = [];
    for (const node of c.nodes.values()) if (acceptsWork(node)) open.push(node);
    if (open.length === 0) return [];
    const views: SchedulingNode[] = open.map((n) => ({ id: n.id, slots: slots(n.capacity), assigned: n.assigned.size, warmImages: n.warm }));
    const taken = new Map<string, QueuedRollout>();
    const view: SchedulingQueue = {
      get size() {
        return queue.size;
      },
      take(preferImages) {
        const item = queue.take(preferImages);
        if (item) taken.set(item.id, item);
        return item;
      },
    };
    const batch: Dispatched[] = [];
    for (const { rolloutId, nodeId } of this.policy.place(view, views, DISPATCH_BATCH)) {
      taken.delete(rolloutId);
      const rollout = c.rollouts.get(rolloutId);
      if (!rollout || rollout.state !== "QUEUED") continue; // a stale queue entry
      const node = c.nodes.get(nodeId);
      if (!node || !acceptsWork(node)) {
        queue.push(rollout); // the policy overfilled or named a node that takes no work
        continue;
      }
      c.rollouts.move(rollout, { to: "ASSIGNED", nodeId, policyVersion: c.policyVersion() });
      batch.push({ rollout, node, attempt: rollout.attempt });
    }
    // Taken and not placed: back in the queue.
    for (const id of taken.keys()) {
      const rollout = c.rollouts.get(id);
      if (rollout?.state === "QUEUED") queue.push(rollout);
    }
    return batch;
  }

  assignmentFor(rollout: LiveRollout): Assignment {
    const group = this.core.groups.get(rollout.groupId)!;
    return {
      rollout_id: rollout.id,
      attempt: rollout.attempt,
      group_id: group.id,
      request: group.request,
      remaining_timeout_seconds: group.request.timeout_seconds,
    };
  }
}
