// Why: what happens to a node's rollouts as it comes and goes — on a (re)connect, keep what both
// sides agree it runs, cancel what it runs that is no longer its own, and queue again what it no
// longer has or reports interrupted by its own restart; on a disconnect, wait out the grace; once
// lost, queue its rollouts again (attempt counted) or fail those whose attempts are spent.
import { LINK_PROTOCOL_VERSION, type NodeHello } from "../protocol/node-link.ts";
import { ROLLOUT_RESULT_STATUSES } from "../protocol/rollout.ts";
import { PolarError, wsErrorFrame } from "../protocol/errors.ts";
import type { CoordinatorCore } from "./core.ts";
import { slots, type NodePeer, type NodeState } from "./node-states.ts";
import type { Outcomes } from "./outcomes.ts";
import type { LiveRollout } from "./rollout-states.ts";

export class NodePresence {
  constructor(
    private readonly core: CoordinatorCore,
    private readonly outcomes: Outcomes,
  ) {}

  /** The handshake of an admitted node (coordinator/peer-identities.ts): registers or resumes it; null when it must be refused. */
  hello(peer: NodePeer, hello: NodeHello, issuedSecret?: string): NodeState | null {
    const c = this.core;
    if (hello.protocol_version !== LINK_PROTOCOL_VERSION) {
      peer.send(wsErrorFrame(new PolarError("bad_request", `coordinator speaks node protocol ${LINK_PROTOCOL_VERSION}, node sent ${hello.protocol_version}`)));
      return null;
    }
    let node = c.nodes.get(hello.node_id);
    const reconnect = node !== undefined;
    c.nodes.recordHello(node ?? (node = c.nodes.add(hello.node_id, { to: "connected", peer, cause: "hello" })), hello);
    if (reconnect) c.nodes.move(node, { to: "connected", peer, cause: "hello" });
    peer.send({
      type: "welcome",
      protocol_version: LINK_PROTOCOL_VERSION,
      node_id: node.id,
      heartbeat_ms: c.config.heartbeatMs,
      policy_version: c.policyVersion(),
      trace_frames: true,
      ...(issuedSecret && { node_secret: issuedSecret }),
    });

    // What both agree on stays; what the node runs that is no longer its own is cancelled there.
    const kept = new Set<string>();
    for (const h of hello.held) {
      const rollout = this.current(node, h.rollout_id, h.attempt);
      if (rollout) {
        kept.add(rollout.id);
        c.rollouts.setStage(rollout, h.state);
      } else if (!(ROLLOUT_RESULT_STATUSES as readonly string[]).includes(h.state)) {
        // Not finished there (a finished one's result is sent, and dropped as late).
        peer.send({ type: "cancel", rollout_id: h.rollout_id, attempt: h.attempt, reason: "no longer assigned to this node" });
      }
    }
    // A restart of the node cut these off: queued again, attempt counted, like a lost node's.
    const interrupted = new Map<string, string[]>();
    for (const i of hello.interrupted) {
      if (kept.has(i.rollout_id) || !this.current(node, i.rollout_id, i.attempt)) continue;
      const cause = `node ${node.id} restarted (${i.cause})`;
      (interrupted.get(cause) ?? interrupted.set(cause, []).get(cause)!).push(i.rollout_id);
    }
    const gone = new Set([...interrupted.values()].flat());
    const missing = [...node.assigned].filter((id) => !kept.has(id) && !gone.has(id));
    for (const [cause, ids] of interrupted) void this.release(node, ids, cause);
    if (missing.length > 0) void this.release(node, missing, `node ${node.id} no longer holds it`);
    c.events.emit("node.joined", {
      node_id: node.id,
      reconnect,
      version: hello.version,
      capacity: hello.capacity,
      slots: slots(hello.capacity),
      harnesses: hello.harnesses,
      engines: hello.engines,
      images_warm: [...node.warm],
      kept: kept.size,
      released: gone.size + missing.length,
      at: c.now(),
    });
    if (c.isPaused()) peer.send({ type: "pause", request_id: `reconnect-${node.id}` });
    c.scheduleDispatch();
    return node;
  }

  /** The node's socket closed (or it went silent): its rollouts wait out the grace. */
  disconnected(node: NodeState, cause: string): void {
    if (node.state !== "disconnected") this.core.nodes.move(node, { to: "disconnected", cause });
  }

  /** The grace ran out: the node is lost and its rollouts move on. */
  async graceExpired(node: NodeState): Promise<void> {
    const c = this.core;
    const ids = [...node.assigned];
    c.nodes.move(node, { to: "lost", cause: `no reconnect within ${c.config.nodeGraceMs} ms` });
    c.events.emit("node.lost", { node_id: node.id, rollout_ids: ids, at: c.now() });
    await this.release(node, ids, `node ${node.id} lost`);
  }

  /** Rollouts a node no longer runs: back to the queue, or failed once attempts are spent. */
  async release(node: NodeState, ids: string[], cause: string): Promise<void> {
    const c = this.core;
    const requeue: LiveRollout[] = [];
    for (const id of ids) {
      const rollout = c.rollouts.get(id);
      if (!rollout || rollout.state !== "ASSIGNED" || rollout.nodeId !== node.id) continue;
      if (rollout.attempt >= c.config.maxAttempts) {
        await this.outcomes.exhausted(rollout, cause);
        continue;
      }
      c.rollouts.move(rollout, { to: "QUEUED", cause });
      requeue.push(rollout);
    }
    if (requeue.length === 0) return;
    await c.persist(() =>
      c.repo.requeue(
        requeue.map((r) => r.id),
        cause,
      ),
    );
    c.events.emit("rollout.requeued", { rollout_ids: requeue.map((r) => r.id), node_id: node.id, cause, at: c.now() });
    c.scheduleDispatch();
  }

  /** The rollout when `node` holds its current attempt. */
  private current(node: NodeState, rolloutId: string, attempt: number): LiveRollout | undefined {
    const rollout = this.core.rollouts.get(rolloutId);
    return rollout && rollout.state === "ASSIGNED" && rollout.nodeId === node.id && rollout.attempt === attempt ? rollout : undefined;
  }
}
