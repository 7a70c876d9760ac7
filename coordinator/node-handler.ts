// Why: what the coordinator does with each frame a node agent sends — the handshake, heartbeats,
// progress, results (acknowledged only once stored), pause answers — and with the node's
// disconnection or silence; every decision is a Coordinator method.
import { PolarError, wsErrorFrame } from "../protocol/errors.ts";
import { LINK_PROTOCOL_VERSION, type NodeHello, type NodeToCoordinator } from "../protocol/node-link.ts";
import type { Coordinator } from "./coordinator.ts";
import type { NodePeer, NodeState } from "./node-states.ts";
import { wholeResult, type PackedResult } from "./packed-results.ts";
import type { PauseBook } from "./pauses.ts";
import { refusePeer } from "./peer-identities.ts";

export class NodeHandler {
  constructor(
    private readonly coordinator: Coordinator,
    private readonly pauses: PauseBook,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The handshake: the node proves its id (the secret issued at its first registration) and no
   * other connection holds it; then it is registered (or resumed). Null when it was refused.
   */
  async hello(peer: NodePeer, hello: NodeHello): Promise<NodeState | null> {
    const c = this.coordinator;
    if (hello.protocol_version !== LINK_PROTOCOL_VERSION) return c.nodeHello(peer, hello);
    const admitted = await c.identities.admit(
      "node",
      hello.node_id,
      hello.node_secret,
      () => Boolean(c.nodes.get(hello.node_id)?.peer),
      (issued) => c.nodeHello(peer, hello, issued),
    );
    if (admitted.ok) return admitted.value;
    refusePeer(c, peer, "node", hello.node_id, admitted);
    return null;
  }

  /** A frame of `peer`'s connection: only the node's current connection is heard (results included). */
  async message(node: NodeState, peer: NodePeer, message: NodeToCoordinator): Promise<void> {
    const c = this.coordinator;
    if (!this.heard(node, peer)) return;
    switch (message.type) {
      case "hello":
        node.peer?.send(wsErrorFrame(new PolarError("bad_request", "hello was already received")));
        return;
      case "heartbeat":
        c.nodeHeartbeat(node, message.load, message.images_warm, message.gateway);
        return;
      case "progress":
        c.nodeProgress(node, message.rollout_id, message.attempt, message.state);
        return;
      case "result":
        return this.storeResult(node, message.rollout_id, message.attempt, wholeResult(message.result));
      case "paused":
        this.pauses.drained(message.request_id, node.id);
        return;
      case "resumed":
        return;
    }
  }

  /** A trace frame's result from `peer`'s connection, its blob already checked. */
  async traceFrameResult(node: NodeState, peer: NodePeer, rolloutId: string, attempt: number, packed: PackedResult): Promise<void> {
    if (this.heard(node, peer)) await this.storeResult(node, rolloutId, attempt, packed);
  }

  /**
   * A frame arrived on `peer`'s connection: the node is alive, however long the frame then waits
   * its turn (behind a result the store takes only once it can write again, store-guard.ts).
   */
  received(node: NodeState, peer: NodePeer): void {
    if (node.peer === peer) this.coordinator.nodeHeard(node);
  }

  /** Only the node's current connection is heard: false for an older one. */
  private heard(node: NodeState, peer: NodePeer): boolean {
    if (node.peer !== peer) return false;
    this.coordinator.nodeHeard(node);
    return true;
  }

  /** Stored, or recognised as late or repeated, before the node is told it may forget it. */
  private async storeResult(node: NodeState, rolloutId: string, attempt: number, packed: PackedResult): Promise<void> {
    await this.coordinator.acceptResult(node.id, rolloutId, attempt, packed);
    node.peer?.send({ type: "result_ack", rollout_id: rolloutId, attempt });
  }

  closed(node: NodeState, peer: NodePeer): void {
    if (node.peer !== peer) return; // an older connection of a node that already reconnected
    this.pauses.nodeGone(node.id);
    this.coordinator.nodeDisconnected(node, "connection closed");
  }

  /** Closes nodes that stopped heartbeating; their rollouts follow the lost-node path. */
  sweep(): void {
    const c = this.coordinator;
    for (const node of c.silentNodes(this.now() - c.config.heartbeatMs * c.config.missedHeartbeats)) {
      const peer = node.peer!;
      this.pauses.nodeGone(node.id);
      c.nodeDisconnected(node, "heartbeat timeout");
      peer.close(4002, "heartbeat timeout");
    }
  }
}
