// Why: a coordinator rollout's lifecycle is an explicit state machine — its states and every
// allowed move are data here — and RolloutBook.move is the one function that changes a
// rollout's state: checked against the table, kept in step with the queue and with the node
// that holds it, then announced. Store writes are the callers' (they batch them).
import type { EventBus } from "../lib/events.ts";
import { PolarError } from "../protocol/errors.ts";
import type { NodeRolloutState } from "../protocol/node-link.ts";
import { ROLLOUT_RESULT_STATUSES } from "../protocol/rollout.ts";
import type { CoordinatorEvents } from "./events.ts";
import type { NodeState } from "./node-states.ts";
import { RolloutQueue } from "./queue.ts";

/** Waiting, on a node, or ended the way its result says (the words the node and trainers use). */
export const ROLLOUT_STATES = ["QUEUED", "ASSIGNED", ...ROLLOUT_RESULT_STATUSES] as const;
export type RolloutStateName = (typeof ROLLOUT_STATES)[number];

export const TERMINAL_ROLLOUT_STATES = ROLLOUT_RESULT_STATUSES satisfies readonly RolloutStateName[];
export type TerminalRolloutState = (typeof TERMINAL_ROLLOUT_STATES)[number];
export type LiveRolloutState = Exclude<RolloutStateName, TerminalRolloutState>;

/** state → the states it may move to. */
export const ROLLOUT_TRANSITIONS: Readonly<Record<RolloutStateName, readonly RolloutStateName[]>> = {
  // Cancelled while waiting (group cancelled, early stop, group deleted).
  QUEUED: ["ASSIGNED", "CANCELLED"],
  // Back to the queue (node lost or restarted, no longer held, stale policy), or ended: a
  // result, attempts spent (error), or cancelled on its node.
  ASSIGNED: ["QUEUED", "COMPLETED", "ERROR", "TIMEOUT", "CANCELLED"],
  COMPLETED: [],
  ERROR: [],
  TIMEOUT: [],
  CANCELLED: [],
};

export function canMove(from: RolloutStateName, to: RolloutStateName): boolean {
  return ROLLOUT_TRANSITIONS[from].includes(to);
}

export function isRolloutStateName(state: string): state is RolloutStateName {
  return (ROLLOUT_STATES as readonly string[]).includes(state);
}

export function isTerminalRolloutState(state: string): state is TerminalRolloutState {
  return (TERMINAL_ROLLOUT_STATES as readonly string[]).includes(state);
}

/** A rollout the coordinator still has to see through (it leaves the book when it reaches a terminal state). */
export interface LiveRollout {
  readonly id: string;
  readonly groupId: string;
  readonly idx: number;
  readonly image: string;
  readonly priority: number;
  /** Submission order: FIFO within a priority. */
  readonly seq: number;
  state: RolloutStateName;
  nodeId: string | null;
  /** Assignments so far; a result is accepted only for the current one. */
  attempt: number;
  policyVersionStarted: number | null;
  /** The node-side state last reported (INIT, RUN, POSTRUN…). */
  stage: NodeRolloutState | null;
  /** When it entered its state (epoch ms). */
  since: number;
}

export type RolloutMove =
  | { to: "QUEUED"; cause: string }
  | { to: "ASSIGNED"; nodeId: string; policyVersion: number }
  | { to: TerminalRolloutState; cause: string | null; timing?: Record<string, number> };

export class RolloutBook {
  private readonly live = new Map<string, LiveRollout>();
  /** Queued rollouts in dispatch order; a scheduling policy takes from it. */
  readonly queue = new RolloutQueue();

  constructor(
    private readonly events: EventBus<CoordinatorEvents>,
    private readonly nodeOf: (nodeId: string) => NodeState | undefined,
    private readonly now: () => number,
  ) {}

  get(id: string): LiveRollout | undefined {
    return this.live.get(id);
  }

  values(): IterableIterator<LiveRollout> {
    return this.live.values();
  }

  get size(): number {
    return this.live.size;
  }

  /** A rollout enters the book: queued (new, or reloaded queued) or assigned (reloaded, its node's grace running). */
  add(rollout: LiveRollout & { state: LiveRolloutState }, cause: string | null): void {
    this.live.set(rollout.id, rollout);
    if (rollout.state === "QUEUED") this.queue.push(rollout);
    else if (rollout.nodeId) this.nodeOf(rollout.nodeId)?.assigned.add(rollout.id);
    this.announce(rollout, null, rollout.state, { cause });
  }

  /** The one mover: validates against the table, updates queue and node, then tells listeners. */
  move(rollout: LiveRollout, move: RolloutMove): void {
    const from = rollout.state;
    if (this.live.get(rollout.id) !== rollout || !canMove(from, move.to))
      throw new PolarError("internal", `rollout ${rollout.id}: no move ${from} → ${move.to}`);
    const heldBy = rollout.nodeId;
    if (heldBy) this.nodeOf(heldBy)?.assigned.delete(rollout.id);
    switch (move.to) {
      case "QUEUED":
        rollout.state = "QUEUED";
        rollout.nodeId = null;
        rollout.stage = null;
        this.queue.push(rollout);
        break;
      case "ASSIGNED":
        this.queue.remove(rollout.id);
        rollout.state = "ASSIGNED";
        rollout.nodeId = move.nodeId;
        rollout.attempt += 1;
        rollout.policyVersionStarted = move.policyVersion;
        rollout.stage = null;
        this.nodeOf(move.nodeId)?.assigned.add(rollout.id);
        break;
      default:
        // Its state stays readable to whoever still holds it (a dispatch round being written).
        rollout.state = move.to;
        this.live.delete(rollout.id);
        this.queue.remove(rollout.id);
    }
    const inStateMs = this.now() - rollout.since;
    rollout.since = this.now();
    this.announce(rollout, from, move.to, {
      cause: move.to === "ASSIGNED" ? null : move.cause,
      inStateMs,
      nodeId: move.to === "ASSIGNED" ? move.nodeId : heldBy,
      timing: "timing" in move ? move.timing : undefined,
    });
  }

  /** A node reported the stage its run of the rollout reached (not a state change of ours). */
  setStage(rollout: LiveRollout, stage: NodeRolloutState): void {
    if (rollout.stage === stage) return;
    rollout.stage = stage;
    this.events.emit("rollout.stage_changed", {
      rollout_id: rollout.id,
      group_id: rollout.groupId,
      node_id: rollout.nodeId,
      attempt: rollout.attempt,
      stage,
      at: this.now(),
    });
  }

  private announce(
    rollout: LiveRollout,
    from: RolloutStateName | null,
    to: RolloutStateName,
    extra: { cause: string | null; inStateMs?: number; nodeId?: string | null; timing?: Record<string, number> },
  ): void {
    this.events.emit("rollout.state_changed", {
      rollout_id: rollout.id,
      group_id: rollout.groupId,
      from,
      to,
      node_id: extra.nodeId === undefined ? rollout.nodeId : extra.nodeId,
      attempt: rollout.attempt,
      stage: rollout.stage,
      cause: extra.cause,
      at: this.now(),
      ...(extra.inStateMs !== undefined && { in_state_ms: extra.inStateMs }),
      ...(extra.timing && { timing: extra.timing }),
    });
  }
}
