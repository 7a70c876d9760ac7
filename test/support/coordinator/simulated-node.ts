// Why: the coordinator's tests and its benchmark need many nodes that speak the node protocol
// exactly — handshake, heartbeats, results kept until acknowledged, cancel, drain, pause — with a
// simulated pipeline instead of sandboxes, so the coordinator is exercised over real WebSockets.
import { SessionTiming } from "../../../protocol/rollout.ts";
import { CoordinatorToNode, LINK_PROTOCOL_VERSION, type Assignment, type NodeToCoordinator, type ReportedResult } from "../../../protocol/node-link.ts";
import { nodeResultFrame } from "../../../protocol/trace-frame.ts";

export interface SimulatedNodeOptions {
  url: string;
  token: string;
  nodeId: string;
  capacity?: { init: number; run: number; postrun: number };
  imagesWarm?: Record<string, number>;
  /** How long a rollout "runs" before its result is sent; null holds it until `finishHeld`. */
  runMs?: (assignment: Assignment) => number | null;
  /** The result a rollout produces (default: COMPLETED, reward 1, one small trace). */
  makeResult?: (assignment: Assignment) => ReportedResult;
  heartbeatMs?: number;
  /** Node id → the secret its coordinator issued: shared by the instances of one id, as a real node's store folder keeps it. */
  secrets?: Map<string, string>;
  /** Send results as binary trace frames when the coordinator's welcome accepts them (default: JSON). */
  traceFrames?: boolean;
}

export function defaultResult(a: Pick<Assignment, "rollout_id" | "request">, reward = 1, traceTokens = 16): ReportedResult {
  const ids = Array.from({ length: traceTokens }, (_, i) => 1000 + i);
  return {
    session_id: a.rollout_id,
    task_id: a.request.task_id,
    status: "COMPLETED",
    trajectory: {
      status: "COMPLETED",
      traces: [
        {
          prompt_ids: ids,
          response_ids: ids,
          loss_mask: ids.map(() => 1),
          response_logprobs: ids.map(() => -0.5),
          finish_reason: "stop",
          reward,
          metadata: { policy_versions: [0] },
        },
      ],
      metadata: {},
      error: null,
    },
    timing: SessionTiming.parse({ init_ms: 1, run_ms: 2, e2e_ms: 3 }),
    node_id: null,
    error: null,
    metadata: a.request.metadata,
  };
}

export class SimulatedNode {
  private ws: WebSocket | null = null;
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  /** Running: rollout id → attempt and timer. */
  readonly running = new Map<string, { attempt: number; timer: ReturnType<typeof setTimeout> | null }>();
  private readonly held = new Map<string, Assignment>();
  /** Finished, sent, not yet acknowledged. */
  readonly unacked = new Map<string, { attempt: number; result: ReportedResult }>();
  /** Cut off by a restart (`restart`): reported in the next hello, then forgotten. */
  private readonly interrupted = new Map<string, { attempt: number; cause: string }>();
  readonly received: Assignment[] = [];
  readonly cancels: string[] = [];
  /** Error frames the coordinator sent, in order. */
  readonly errors: { code: string; message: string }[] = [];
  pauses = 0;
  drained = false;
  welcomed: Promise<void> = Promise.resolve();
  /** The coordinator's welcome accepted trace frames. */
  private traceFramesAccepted = false;

  private readonly secrets: Map<string, string>;

  constructor(private readonly options: SimulatedNodeOptions) {
    this.secrets = options.secrets ?? new Map();
  }

  connect(): Promise<void> {
    const ws = new WebSocket(`${this.options.url.replace(/^http/, "ws")}/v1/node`, { headers: { authorization: `Bearer ${this.options.token}` } });
    this.ws = ws;
    this.welcomed = new Promise<void>((resolve, reject) => {
      ws.onopen = () => {
        const held = [
          ...[...this.running].map(([rollout_id, r]) => ({ rollout_id, attempt: r.attempt, state: "RUN" as const })),
          ...[...this.unacked].map(([rollout_id, r]) => ({ rollout_id, attempt: r.attempt, state: r.result.status })),
        ];
        const interrupted = [...this.interrupted].map(([rollout_id, r]) => ({ rollout_id, attempt: r.attempt, cause: r.cause }));
        this.interrupted.clear();
        this.send({
          type: "hello",
          protocol_version: LINK_PROTOCOL_VERSION,
          node_id: this.options.nodeId,
          version: "sim",
          capacity: this.options.capacity ?? { init: 2, run: 4, postrun: 2 },
          harnesses: ["mini"],
          images_warm: this.options.imagesWarm ?? {},
          engines: [],
          held,
          interrupted,
          ...(this.secrets.has(this.options.nodeId) && { node_secret: this.secrets.get(this.options.nodeId) }),
        });
      };
      ws.onmessage = (event) => {
        const message = CoordinatorToNode.parse(JSON.parse(String(event.data)));
        if (message.type === "welcome") {
          if (message.node_secret) this.secrets.set(this.options.nodeId, message.node_secret);
          this.traceFramesAccepted = message.trace_frames;
          resolve();
          // Results the coordinator has not acknowledged are sent again.
          for (const [rollout_id, r] of this.unacked) this.sendResult(rollout_id, r.attempt, r.result);
        }
        this.onMessage(message);
      };
      ws.onclose = () => reject(new Error("closed before welcome"));
      ws.onerror = () => {};
    });
    this.welcomed.catch(() => {});
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = setInterval(
      () =>
        this.send({
          type: "heartbeat",
          load: { queued: 0, init: 0, ready: 0, run: this.running.size, postrun: 0 },
          images_warm: this.options.imagesWarm ?? {},
          gateway: { calls: 1, total_ms: 10, max_ms: 10 },
        }),
      this.options.heartbeatMs ?? 1000,
    );
    return this.welcomed;
  }

  private onMessage(message: CoordinatorToNode): void {
    switch (message.type) {
      case "assign": {
        const a = message.assignment;
        this.received.push(a);
        const ms = this.options.runMs ? this.options.runMs(a) : 5;
        if (ms === null) this.held.set(a.rollout_id, a);
        this.running.set(a.rollout_id, { attempt: a.attempt, timer: ms === null ? null : setTimeout(() => this.finish(a), ms) });
        return;
      }
      case "cancel": {
        this.cancels.push(message.rollout_id);
        const r = this.running.get(message.rollout_id);
        if (r && r.attempt === message.attempt) {
          if (r.timer) clearTimeout(r.timer);
          this.running.delete(message.rollout_id);
          this.held.delete(message.rollout_id);
        }
        return;
      }
      case "result_ack":
        this.unacked.delete(message.rollout_id);
        return;
      case "pause":
        this.pauses++;
        this.send({ type: "paused", request_id: message.request_id, policy_version: 0 });
        return;
      case "drain":
        this.drained = true;
        return;
      case "error":
        this.errors.push({ code: message.code, message: message.message });
        return;
      default:
        return;
    }
  }

  /** Finishes up to `max` held rollouts now; returns how many. */
  finishHeld(max = Infinity, makeResult?: (a: Assignment) => ReportedResult): number {
    let n = 0;
    for (const a of this.held.values()) {
      if (n >= max) break;
      this.held.delete(a.rollout_id);
      this.finish(a, makeResult);
      n++;
    }
    return n;
  }

  private finish(a: Assignment, makeResult = this.options.makeResult): void {
    this.running.delete(a.rollout_id);
    const result = makeResult?.(a) ?? defaultResult(a);
    this.unacked.set(a.rollout_id, { attempt: a.attempt, result });
    this.sendResult(a.rollout_id, a.attempt, result);
  }

  private sendResult(rolloutId: string, attempt: number, result: ReportedResult): void {
    const frame = this.options.traceFrames && this.traceFramesAccepted ? nodeResultFrame(rolloutId, attempt, result) : null;
    if (!frame) return this.send({ type: "result", rollout_id: rolloutId, attempt, result });
    this.sendBinary(frame);
  }

  /** A binary message as it is (trace frames, or hostile bytes in tests). */
  sendBinary(bytes: Uint8Array): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(bytes);
  }

  send(message: NodeToCoordinator | Record<string, unknown>): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  /** Drops the socket (a network blip) but keeps running and unacknowledged work, like a real node. */
  disconnect(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.ws?.close();
  }

  /**
   * Killed and started again on its store (call `connect` next): what ran is cut off and is
   * reported as interrupted; finished, unacknowledged results survive and are sent again.
   */
  restart(cause = "node_restarted"): void {
    this.disconnect();
    for (const [id, r] of this.running) {
      if (r.timer) clearTimeout(r.timer);
      this.interrupted.set(id, { attempt: r.attempt, cause });
    }
    this.running.clear();
    this.held.clear();
  }

  /** Dies: nothing survives (kill -9 without a store). */
  kill(): void {
    this.disconnect();
    for (const r of this.running.values()) if (r.timer) clearTimeout(r.timer);
    this.running.clear();
    this.held.clear();
    this.unacked.clear();
  }
}
