// Why: a node joins a cluster by connecting out to the coordinator (`/v1/node`): it registers its
// capacity, runs what it is assigned, reports progress and results (stored before they are
// sent, sent again until acknowledged), heartbeats its load, and obeys cancel, drain and
// pause/resume. It reconnects by itself and, on every (re)connect, tells the coordinator what it
// still holds, from its own store, and which assignments its own restart cut off (those are
// queued again by the coordinator, never reported as results).
import type { EventBus } from "../lib/events.ts";
import {
  CoordinatorToNode,
  LINK_PROTOCOL_VERSION,
  type Assignment,
  type HeldRollout,
  type InterruptedRollout,
  type NodeRolloutState,
  type NodeToCoordinator,
} from "../protocol/node-link.ts";
import { nodeResultFrame } from "../protocol/trace-frame.ts";
import type { SessionResult } from "../protocol/rollout.ts";
import type { Transcript } from "../lib/transcript.ts";
import { reportedResult } from "./assignment-ids.ts";
import type { CoordinatorIdentity } from "./coordinator-identity.ts";
import type { NodeEvents } from "./events.ts";
import type { AssignmentRow, AssignmentsRepo } from "./store/assignments-repo.ts";

export interface CoordinatorLinkOptions {
  url: string;
  token: string;
  nodeId: string;
  version: string;
  capacity: { init: number; run: number; postrun: number };
  harnesses: string[];
  engines: string[];
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Link events (connected, assignments, results, acknowledgements, interruptions, pause). */
  events?: EventBus<NodeEvents>;
  /** Where the secret the coordinator issued this node id is kept (node/coordinator-identity.ts). */
  identity?: CoordinatorIdentity;
}

/** What the link needs from the rest of the node. */
export interface NodeSide {
  assignments: AssignmentsRepo;
  /** Stores and starts an assigned rollout under the node's own id; returns that id. */
  start(assignment: Assignment): Promise<string>;
  /** Stops a live rollout (its result is then stored and reported like any other). */
  cancel(localRolloutId: string): void;
  isLive(localRolloutId: string): boolean;
  /** Why a stored result only records that this node stopped (restart, shutdown); null for a real result. */
  interruption(result: SessionResult): string | null;
  load(): { queued: number; init: number; ready: number; run: number; postrun: number };
  /** Ready sandboxes per image. */
  warmImages(): Record<string, number>;
  /** Gateway calls since the last call of this (count, summed and max latency). */
  takeGatewayLatency(): Promise<{ calls: number; total_ms: number; max_ms: number }>;
  pause(): Promise<number>;
  resume(policyVersion: number): void;
  drain(): void;
  /** The conversation a result's gateway session recorded, sent along for the coordinator's drill-down (never to trainers). */
  transcript?(result: SessionResult): Promise<Transcript | null>;
}

export class CoordinatorLink {
  private ws: WebSocket | null = null;
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  private reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  private delay: number;
  private stopped = false;
  /** The coordinator's welcome accepts results as binary trace frames (token arrays packed). */
  private traceFrames = false;
  private frames: Promise<void> = Promise.resolve();
  /** Node rollout id → the coordinator's rollout id and attempt (live and owed ones). */
  private readonly byLocal = new Map<string, { rolloutId: string; attempt: number }>();
  connected = false;

  constructor(
    private readonly options: CoordinatorLinkOptions,
    private readonly node: NodeSide,
  ) {
    this.delay = options.reconnectMinMs ?? 500;
  }

  start(): void {
    this.open();
  }

  /** The pipeline stored a result: send it if it belongs to an assignment. */
  onResult(result: SessionResult, localRolloutId: string): void {
    void this.reportStored(localRolloutId, result);
  }

  /** A rollout changed state: the coordinator shows the stage of what it assigned. */
  onTransition(localRolloutId: string, state: NodeRolloutState): void {
    const ref = this.byLocal.get(localRolloutId);
    if (ref) this.send({ type: "progress", rollout_id: ref.rolloutId, attempt: ref.attempt, state });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.ws?.close(1000, "node stopping");
  }

  private open(): void {
    const url = `${this.options.url.replace(/^http/, "ws").replace(/\/$/, "")}/v1/node`;
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${this.options.token}` } });
    this.ws = ws;
    ws.onopen = () => void this.hello(ws);
    // Frames are handled one after another: a cancel must not overtake the assign it follows.
    ws.onmessage = (event) => {
      const text = String(event.data);
      this.frames = this.frames
        .then(() => this.onFrame(text))
        .catch((err: unknown) => console.error(`polar node: coordinator frame failed: ${err instanceof Error ? err.message : String(err)}`));
    };
    ws.onerror = () => {};
    ws.onclose = () => {
      if (this.ws !== ws) return;
      if (this.connected) this.options.events?.emit("coordinator.disconnected", { url: this.options.url, at: Date.now() });
      this.connected = false;
      if (this.heartbeat) clearInterval(this.heartbeat);
      if (this.stopped) return;
      this.reconnectTimer = setTimeout(() => this.open(), this.delay);
      this.delay = Math.min(this.delay * 2, this.options.reconnectMaxMs ?? 10_000);
    };
  }

  private async hello(ws: WebSocket): Promise<void> {
    const owed = await this.node.assignments.owed();
    const held: HeldRollout[] = [];
    const interrupted: InterruptedRollout[] = [];
    for (const a of owed) {
      this.byLocal.set(a.rolloutId, { rolloutId: a.coordinatorRolloutId, attempt: a.attempt });
      const cause = a.result ? this.node.interruption(a.result) : null;
      if (cause) interrupted.push({ rollout_id: a.coordinatorRolloutId, attempt: a.attempt, cause });
      else held.push({ rollout_id: a.coordinatorRolloutId, attempt: a.attempt, state: a.state });
    }
    this.sendOn(ws, {
      type: "hello",
      protocol_version: LINK_PROTOCOL_VERSION,
      node_id: this.options.nodeId,
      version: this.options.version,
      capacity: this.options.capacity,
      harnesses: this.options.harnesses,
      images_warm: this.node.warmImages(),
      engines: this.options.engines,
      held,
      interrupted,
      ...this.secret(),
    });
  }

  private secret(): { node_secret?: string } {
    const secret = this.options.identity?.load();
    return secret ? { node_secret: secret } : {};
  }

  private async onFrame(text: string): Promise<void> {
    const parsed = CoordinatorToNode.safeParse(JSON.parse(text));
    if (!parsed.success) return;
    const message = parsed.data;
    switch (message.type) {
      case "welcome":
        // Issued at this node id's first registration: kept before anything else, for every later hello.
        if (message.node_secret) this.options.identity?.save(message.node_secret);
        this.connected = true;
        this.traceFrames = message.trace_frames;
        this.delay = this.options.reconnectMinMs ?? 500;
        this.startHeartbeat(message.heartbeat_ms);
        this.options.events?.emit("coordinator.connected", { url: this.options.url, node_id: message.node_id, at: Date.now() });
        for (const owed of await this.node.assignments.owed()) {
          if (!owed.result) continue;
          const cause = this.node.interruption(owed.result);
          if (cause) {
            // The hello reported it; the coordinator has requeued it (or reassigned it long ago).
            await this.forget(owed.coordinatorRolloutId, owed.attempt);
            this.options.events?.emit("assignment.interrupted", {
              coordinator_rollout_id: owed.coordinatorRolloutId,
              attempt: owed.attempt,
              cause,
              at: Date.now(),
            });
          } else {
            // Results the coordinator has not acknowledged (finished while away, or before a restart).
            await this.sendResult(owed, owed.result);
          }
        }
        return;
      case "assign": {
        const a = message.assignment;
        const local = await this.node.start(a);
        this.byLocal.set(local, { rolloutId: a.rollout_id, attempt: a.attempt });
        this.options.events?.emit("assignment.started", {
          rollout_id: local,
          coordinator_rollout_id: a.rollout_id,
          attempt: a.attempt,
          group_id: a.group_id,
          at: Date.now(),
        });
        return;
      }
      case "cancel":
        for (const [local, ref] of this.byLocal) if (ref.rolloutId === message.rollout_id && ref.attempt === message.attempt) this.node.cancel(local);
        this.options.events?.emit("assignment.cancelled", {
          coordinator_rollout_id: message.rollout_id,
          attempt: message.attempt,
          reason: message.reason,
          at: Date.now(),
        });
        return;
      case "result_ack":
        await this.forget(message.rollout_id, message.attempt);
        this.options.events?.emit("result.acked", { coordinator_rollout_id: message.rollout_id, attempt: message.attempt, at: Date.now() });
        return;
      case "drain":
        this.node.drain();
        return;
      case "pause": {
        const version = await this.node.pause();
        this.send({ type: "paused", request_id: message.request_id, policy_version: version });
        this.options.events?.emit("gateway.paused", { request_id: message.request_id, policy_version: version, at: Date.now() });
        return;
      }
      case "resume":
        this.node.resume(message.policy_version);
        this.send({ type: "resumed", policy_version: message.policy_version });
        this.options.events?.emit("gateway.resumed", { policy_version: message.policy_version, at: Date.now() });
        return;
      case "error":
        console.error(`polar node: coordinator says ${message.code}${message.retryable ? " (retryable)" : ""}: ${message.message}`);
        return;
    }
  }

  /** The coordinator no longer needs this assignment from the node (acknowledged, or interrupted and reported). */
  private async forget(coordinatorRolloutId: string, attempt: number): Promise<void> {
    await this.node.assignments.acknowledge(coordinatorRolloutId, attempt);
    for (const [local, ref] of this.byLocal) if (ref.rolloutId === coordinatorRolloutId && ref.attempt === attempt) this.byLocal.delete(local);
  }

  private async reportStored(localRolloutId: string, result: SessionResult): Promise<void> {
    const row = await this.node.assignments.find(localRolloutId);
    if (!row || row.ackedAt) return;
    // An attempt this node's stopping cut off is reported as interrupted at the next hello.
    if (this.node.interruption(result)) return;
    await this.sendResult(row, result);
  }

  /** The result as the coordinator knows the rollout: its ids, not the node's own. */
  private async sendResult(owed: AssignmentRow, result: SessionResult): Promise<void> {
    const transcript = (await this.node.transcript?.(result).catch(() => null)) ?? null;
    const reported = reportedResult(result, owed, transcript);
    const frame = this.traceFrames ? nodeResultFrame(owed.coordinatorRolloutId, owed.attempt, reported) : null;
    const sent = frame ? this.sendFrame(frame) : this.send({ type: "result", rollout_id: owed.coordinatorRolloutId, attempt: owed.attempt, result: reported });
    if (!sent) return;
    this.options.events?.emit("result.reported", {
      coordinator_rollout_id: owed.coordinatorRolloutId,
      attempt: owed.attempt,
      status: result.status,
      at: Date.now(),
    });
  }

  private startHeartbeat(ms: number): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = setInterval(() => {
      void this.node
        .takeGatewayLatency()
        .then((gateway) => this.send({ type: "heartbeat", load: this.node.load(), images_warm: this.node.warmImages(), gateway }));
    }, ms);
  }

  /** Sends when the link is open; returns whether it was. */
  private send(message: NodeToCoordinator): boolean {
    return this.ws ? this.sendOn(this.ws, message) : false;
  }

  private sendFrame(frame: Uint8Array): boolean {
    if (this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(frame);
    return true;
  }

  private sendOn(ws: WebSocket, message: NodeToCoordinator): boolean {
    if (ws.readyState !== WebSocket.OPEN) return false;
    ws.send(JSON.stringify(message));
    return true;
  }
}
