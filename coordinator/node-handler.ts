// Why: what the coordinator does with each frame a node agent sends — the handshake, heartbeats,
// progress, results (acknowledged only once stored), pause answers — and with the node's
// disconnection or silence; every decision is a Coordinator method.
import { PolarError, wsErrorFrame } from "../protocol/errors.ts";
import type { NodeHello, NodeToCoordinator } from "../protocol/node-link.ts";
import type { Coordinator } from "./coordinator.ts";
import type { NodePeer, NodeState } from "./node-states.ts";
import { wholeResult, type PackedResult } from "./packed-results.ts";
import type { PauseBook } from "./pauses.ts";

export class NodeHandler {
  constructor(
    private readonly coordinator: Coordinator,
    private readonly pauses: PauseBook,
    private readonly now: () => number = Date.now,
  ) {}

  /** The handshake: registers (or resumes) the node; returns null when it must be refused. */
  hello(peer: NodePeer, hello: NodeHello): NodeState | null {
    return this.coordinator.nodeHello(peer, hello);
  }

  /** `packed`: the result of a trace frame, its blob already checked (a JSON result is kept whole). */
  async message(node: NodeState, message: NodeToCoordinator, packed?: PackedResult): Promise<void> {
    const c = this.coordinator;
    c.nodeHeard(node);
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
      case "result": {
        // Stored (or recognised as late / repeated) before the node is told it may forget it.
        await c.acceptResult(node.id, message.rollout_id, message.attempt, packed ?? wholeResult(message.result));
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
