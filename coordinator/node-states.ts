// Why: a node connection's lifecycle is an explicit state machine — connected, draining,
// disconnected (its rollouts wait out the grace), lost — with the moves as data, and
// NodeBook.move the one function that changes a node's state: checked, the grace timer started
// or cleared with it, then announced. What a node reports (capacity, load, warm images) is
// recorded here too, by name, so no other file writes a node's fields.
import type { EventBus } from "../lib/events.ts";
import { PolarError } from "../protocol/errors.ts";
import type { CoordinatorToNode, GatewayLatency, NodeHello, StageCapacity, StageLoad } from "../protocol/node-link.ts";
import type { CoordinatorEvents } from "./events.ts";

export interface NodePeer {
  send(message: CoordinatorToNode): void;
  close(code: number, reason: string): void;
}

export const NODE_STATES = ["connected", "draining", "disconnected", "lost"] as const;
export type NodeStateName = (typeof NODE_STATES)[number];

/** state → the states it may move to. */
export const NODE_TRANSITIONS: Readonly<Record<NodeStateName, readonly NodeStateName[]>> = {
  // connected → connected: a new connection of the same node replaced the old one.
  connected: ["connected", "draining", "disconnected"],
  // A draining node that connects again (it restarted) takes work again.
  draining: ["connected", "disconnected"],
  disconnected: ["connected", "lost"],
  lost: [],
};

export function canMoveNode(from: NodeStateName, to: NodeStateName): boolean {
  return NODE_TRANSITIONS[from].includes(to);
}

export interface NodeState {
  readonly id: string;
  state: NodeStateName;
  peer: NodePeer | null;
  info: Omit<NodeHello, "type" | "held" | "interrupted"> | null;
  capacity: StageCapacity;
  /** Rollouts assigned here and not yet finished (kept by RolloutBook.move). */
  readonly assigned: Set<string>;
  warm: Set<string>;
  load: StageLoad | null;
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

/** A node takes new work: connected (not draining, not away) with a free slot. */
export function acceptsWork(node: NodeState): boolean {
  return node.state === "connected" && node.peer !== null && node.assigned.size < slots(node.capacity);
}

export type NodeMove = { to: "connected"; peer: NodePeer; cause: string } | { to: "draining" | "disconnected" | "lost"; cause: string };

export class NodeBook {
  private readonly nodes = new Map<string, NodeState>();
  /** Shut down: sockets closing after `stop` start no grace (it would fire on a closed store). */
  private stopped = false;

  constructor(
    private readonly events: EventBus<CoordinatorEvents>,
    private readonly graceMs: number,
    /** A disconnected node's grace ran out (it is still disconnected). */
    private readonly onGraceExpired: (node: NodeState) => void,
    private readonly now: () => number,
  ) {}

  get(id: string): NodeState | undefined {
    return this.nodes.get(id);
  }

  values(): IterableIterator<NodeState> {
    return this.nodes.values();
  }

  /** A node first heard of: by its hello (connected), or from the store after a restart (disconnected, its grace running). */
  add(id: string, move: NodeMove & { to: "connected" | "disconnected" }): NodeState {
    const node: NodeState = {
      id,
      state: move.to,
      peer: null,
      info: null,
      capacity: { init: 1, run: 1, postrun: 1 },
      assigned: new Set(),
      warm: new Set(),
      load: null,
      lastSeen: this.now(),
      gatewayCalls: 0,
      gatewayTotalMs: 0,
      graceTimer: null,
    };
    this.nodes.set(id, node);
    this.apply(node, move);
    this.events.emit("node.state_changed", { node_id: id, from: null, to: move.to, cause: move.cause, at: this.now() });
    return node;
  }

  /** The one mover: validates against the table, starts or clears the grace, then tells listeners. */
  move(node: NodeState, move: NodeMove): void {
    const from = node.state;
    if (this.nodes.get(node.id) !== node || !canMoveNode(from, move.to)) throw new PolarError("internal", `node ${node.id}: no move ${from} → ${move.to}`);
    node.state = move.to;
    this.apply(node, move);
    if (move.to === "lost") this.nodes.delete(node.id);
    this.events.emit("node.state_changed", { node_id: node.id, from, to: move.to, cause: move.cause, at: this.now() });
  }

  private apply(node: NodeState, move: NodeMove): void {
    if (node.graceTimer) clearTimeout(node.graceTimer);
    node.graceTimer = null;
    if (move.to === "connected") {
      node.peer = move.peer;
      node.lastSeen = this.now();
      return;
    }
    if (move.to === "draining") return;
    node.peer = null;
    if (move.to === "disconnected" && !this.stopped)
      node.graceTimer = setTimeout(() => node.state === "disconnected" && this.onGraceExpired(node), this.graceMs);
  }

  /** What the node said of itself in its hello. */
  recordHello(node: NodeState, hello: NodeHello): void {
    const { type: _type, held: _held, interrupted: _interrupted, ...info } = hello;
    node.info = info;
    node.capacity = hello.capacity;
    node.warm = warmSet(hello.images_warm);
    node.lastSeen = this.now();
  }

  recordHeartbeat(node: NodeState, load: StageLoad, imagesWarm: Record<string, number>, gateway: GatewayLatency | undefined): void {
    node.load = load;
    node.warm = warmSet(imagesWarm);
    if (gateway) {
      node.gatewayCalls += gateway.calls;
      node.gatewayTotalMs += gateway.total_ms;
    }
  }

  /** Any frame from the node: it is alive. */
  heard(node: NodeState): void {
    node.lastSeen = this.now();
  }

  /** Clears every timer (shutdown). */
  stop(): void {
    this.stopped = true;
    for (const node of this.nodes.values()) if (node.graceTimer) clearTimeout(node.graceTimer);
  }
}

function warmSet(images: Record<string, number>): Set<string> {
  return new Set(
    Object.entries(images)
      .filter(([, n]) => n > 0)
      .map(([image]) => image),
  );
}
