// Why: where each queued rollout runs is a policy, not a fixed rule: the coordinator hands a
// SchedulingPolicy the queue and the nodes that take work, and the policy answers with
// placements. A new placement rule is one file implementing this interface.
import type { QueuedRollout } from "./queue.ts";

/** A node that takes work, as a policy sees it. */
export interface SchedulingNode {
  readonly id: string;
  /** Sessions it runs at once (init + run + postrun workers). */
  readonly slots: number;
  /** Rollouts it holds now. */
  readonly assigned: number;
  /** Images it has a ready sandbox for. */
  readonly warmImages: ReadonlySet<string>;
}

/** The queue as a policy sees it: highest priority first, FIFO within one. */
export interface SchedulingQueue {
  readonly size: number;
  /** Removes and returns the next rollout of the top priority; with `preferImages`, the oldest of those images when it has one. */
  take(preferImages?: ReadonlySet<string>): QueuedRollout | undefined;
}

export interface Placement {
  rolloutId: string;
  nodeId: string;
}

export interface SchedulingPolicy {
  readonly name: string;
  /**
   * Up to `max` placements from `queue` onto `nodes`, never more on a node than its free slots.
   * A rollout taken from the queue and not placed goes back to it.
   */
  place(queue: SchedulingQueue, nodes: readonly SchedulingNode[], max: number): Placement[];
}
