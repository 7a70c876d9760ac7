// Why: what the coordinator does with each frame a node agent sends — handshake and
// reconciliation of what the node still holds, heartbeats, progress, results (acknowledged only
// once stored), drain answers — and with the node's disconnection.
import { LINK_PROTOCOL_VERSION, type NodeHello, type NodeToCoordinator } from "../protocol/node-link.ts";
import type { Coordinator } from "./coordinator.ts";
import { newNodeState, type NodePeer, type NodeState } from "./nodes.ts";
import type { PauseBook } from "./pauses.ts";

export class NodeHandler {
  constructor(
    private readonly coordinator: Coordinator,
    private readonly pauses: PauseBook,
    private readonly now: () => number = Date.now,
  ) {}

  /** The handshake: registers (or resumes) the node; returns null when it must be refused. */
  hello(peer: NodePeer, hello: NodeHello): NodeState | null {
    const c = this.coordinator;
    if (hello.protocol_version !== LINK_PROTOCOL_VERSION) {
      peer.send({ type: "error", code: "protocol_version", message: `coordinator speaks node protocol ${LINK_PROTOCOL_VERSION}, node sent ${hello.protocol_version}` });
      return null;
    }
    let node = c.nodes.get(hello.node_id);
    if (node?.peer && node.peer !== peer) node.peer.close(4001, "replaced by a new connection of the same node");
    if (!node) c.nodes.set(hello.node_id, (node = newNodeState(hello.node_id, this.now())));
    if (node.graceTimer) clearTimeout(node.graceTimer);
    node.graceTimer = null;
    const { type: _type, held, ...info } = hello;
    Object.assign(node, { peer, info, capacity: hello.capacity, draining: false, lastSeen: this.now() });
    node.warm = warmSet(hello.images_warm);
    peer.send({ type: "welcome", protocol_version: LINK_PROTOCOL_VERSION, node_id: node.id, heartbeat_ms: c.config.heartbeatMs, policy_version: c.policyVersion });

    // Reconcile: keep what both agree on, cancel what the node runs that is no longer its own,
    // and requeue what the coordinator thought it ran but the node no longer has.
    const heldIds = new Set<string>();
    for (const h of held) {
      const rollout = c.active.get(h.rollout_id);
      if (rollout && rollout.state === "assigned" && rollout.nodeId === node.id && rollout.attempt === h.attempt) {
        heldIds.add(h.rollout_id);
        node.assigned.add(h.rollout_id);
        rollout.stage = h.state;
      } else if (h.state !== "finished") {
        peer.send({ type: "cancel", rollout_id: h.rollout_id, attempt: h.attempt, reason: "no longer assigned to this node" });
      }
    }
    const lost = [...node.assigned].filter((id) => !heldIds.has(id));
    if (lost.length > 0) void c.releaseFromNode(node, lost, `node ${node.id} no longer holds it`);
    if (c.paused) peer.send({ type: "pause", request_id: `reconnect-${node.id}` });
    c.scheduleDispatch();
    return node;
  }

  async message(node: NodeState, message: NodeToCoordinator): Promise<void> {
    const c = this.coordinator;
    node.lastSeen = this.now();
    switch (message.type) {
      case "hello":
        node.peer?.send({ type: "error", code: "bad_frame", message: "hello was already received" });
        return;
      case "heartbeat":
        node.load = message.load;
        node.warm = warmSet(message.images_warm);
        if (message.gateway) {
          node.gatewayCalls += message.gateway.calls;
          node.gatewayTotalMs += message.gateway.total_ms;
        }
        return;
      case "progress": {
        const rollout = c.active.get(message.rollout_id);
        if (rollout && rollout.nodeId === node.id && rollout.attempt === message.attempt) rollout.stage = message.state;
        return;
      }
      case "result": {
        // Stored (or recognised as late / repeated) before the node is told it may forget it.
        await c.acceptResult(node.id, message.rollout_id, message.attempt, message.result);
        node.peer?.send({ type: "result_ack", rollout_id: message.rollout_id, attempt: message.attempt });
        return;
      }
      case "paused":
        this.pauses.drained(message.request_id, node.id);
        return;
      case "resumed":
        return;
    }
  }

  closed(node: NodeState, peer: NodePeer): void {
    if (node.peer !== peer) return; // an older connection of a node that already reconnected
    this.pauses.nodeGone(node.id);
    this.coordinator.nodeDisconnected(node);
  }

  /** Closes nodes that stopped heartbeating; their rollouts follow the lost-node path. */
  sweep(): void {
    const c = this.coordinator;
    const limit = c.config.heartbeatMs * c.config.missedHeartbeats;
    for (const node of c.nodes.values()) {
      if (!node.peer || this.now() - node.lastSeen <= limit) continue;
      const peer = node.peer;
      this.closed(node, peer);
      peer.close(4002, "heartbeat timeout");
    }
  }
}

function warmSet(images: Record<string, number>): Set<string> {
  return new Set(Object.entries(images).filter(([, n]) => n > 0).map(([image]) => image));
}
