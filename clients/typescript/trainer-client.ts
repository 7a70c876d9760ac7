// Why: the TypeScript side of the trainer stream — connect with a trainer token, submit groups,
// grant credits, receive each result once (the wire is at-least-once: repeats after a reconnect
// are dropped by id here), acknowledge, drive weight sync and read per-task pass rates —
// reconnecting by itself. Results come as binary trace frames unless it asks for JSON; either
// way the caller gets the same StreamedResult.
import { IDENTITY_CLOSE } from "../../protocol/errors.ts";
import { decodeTraceFrame, unpackTraces, type TraceEncoding } from "../../protocol/trace-frame.ts";
import {
  CoordinatorToTrainer,
  TRAINER_PROTOCOL_VERSION,
  type GroupSpecInput,
  type StreamedResult,
  type TrainerToCoordinator,
} from "../../protocol/trainer-stream.ts";
import type { TaskStatsAnswer, TaskStatsQueryInput } from "../../protocol/task-stats.ts";

/**
 * A finished group: rewards and advantages, whether it is flat (`reward_std` at or below the
 * submit's `min_reward_std`) and, with `replace_flat`, the group started in its place
 * (`replaced_by`) or the one it replaces (`replaces`). Flat groups arrive like any other.
 */
export type GroupMessage = Extract<CoordinatorToTrainer, { type: "group" }>;

export interface TrainerClientOptions {
  /** Coordinator base URL (http:// or ws://). */
  url: string;
  token: string;
  trainerId: string;
  /**
   * The secret the coordinator issued this trainer id at its first hello (from an earlier run);
   * the client keeps the one it is issued across reconnects by itself.
   */
  secret?: string;
  /** Called once with the secret issued at this trainer id's first hello: keep it to restart as the same trainer. */
  onSecret?: (secret: string) => void;
  /** Credits granted on every (re)connect, and topped up as results are acknowledged. */
  window?: number;
  /**
   * Result frames asked for in the hello: `binary` (default; token arrays packed, decoded here) or
   * `json`. A coordinator older than trace frames sends JSON whatever is asked; both are read.
   */
  encoding?: TraceEncoding;
  /**
   * Acknowledge each result as soon as `onResult` returns (default true); the acknowledgements and
   * the credits they give back go out together, one frame each per turn of the event loop.
   */
  autoAck?: boolean;
  onResult?: (result: StreamedResult) => void | Promise<void>;
  onGroup?: (group: GroupMessage) => void;
  /** Errors that answer no request of this client (e.g. a refused resume or cancel_group). */
  onError?: (error: { code: string; message: string }) => void;
  reconnectDelayMs?: number;
  /**
   * Acknowledged result ids remembered to drop repeats (default 100,000). A repeat is a result
   * sent again after a reconnect because its acknowledgement was lost with the connection, so
   * the recent ones suffice; ids not yet acknowledged are always remembered.
   */
  ackedIdsKept?: number;
}

/**
 * A frame from the coordinator: a text frame is JSON; a binary one a trace frame whose blob holds
 * the result's token arrays, put back into its header's traces before the message is checked
 * against the same schema as a JSON frame.
 */
export function parseCoordinatorFrame(data: string | ArrayBuffer | Uint8Array): CoordinatorToTrainer {
  if (typeof data === "string") return CoordinatorToTrainer.parse(JSON.parse(data));
  const { header, blob } = decodeTraceFrame(data instanceof Uint8Array ? data : new Uint8Array(data));
  const h = header as { type?: unknown; result?: { traces?: unknown } } | null;
  if (h?.type !== "result" || !Array.isArray(h.result?.traces)) throw new Error("a trace frame carries a result with its traces");
  return CoordinatorToTrainer.parse({ ...h, result: { ...h.result, traces: unpackTraces(h.result.traces as Record<string, unknown>[], blob) } });
}

interface Pending<T> {
  resolve: (value: T) => void;
  reject: (err: Error) => void;
}

export class TrainerClient {
  private ws: WebSocket | null = null;
  private closed = false;
  /** Results delivered to onResult and not yet acknowledged. */
  private readonly unacked = new Set<string>();
  /** Acknowledged ids, oldest first, at most `ackedIdsKept`. */
  private readonly acked = new Set<string>();
  private readonly pending = new Map<string, Pending<any>>();
  private nextRequest = 0;
  private connected: Promise<void>;
  private markConnected!: () => void;
  /** Auto-acknowledged ids waiting for this turn's `ack` frame. */
  private autoAcked: string[] = [];
  /** Results received (after de-duplication), and repeats dropped. */
  readonly counts = { results: 0, duplicates: 0 };

  /** The secret proving this trainer id to the coordinator (given, or issued at the first hello). */
  secret: string | undefined;

  constructor(private readonly options: TrainerClientOptions) {
    this.secret = options.secret;
    this.connected = new Promise((resolve) => (this.markConnected = resolve));
    this.open();
  }

  /** Resolves once the coordinator welcomed this connection. */
  ready(): Promise<void> {
    return this.connected;
  }

  async submit(group: GroupSpecInput): Promise<{ group_id: string; rollout_ids: string[] }> {
    return this.request((request_id) => ({ type: "submit", request_id, group: group as any }));
  }

  /** Per-task pass rates, ranked by distance to `target_pass_rate` when given (protocol/task-stats.ts). */
  async taskStats(query: TaskStatsQueryInput = {}): Promise<TaskStatsAnswer> {
    return this.request((request_id) => ({ type: "task_stats", request_id, limit: 100, ...query }));
  }

  /** Asks every node to hold new LLM calls; resolves once all have drained. */
  async pause(): Promise<{ nodes: number }> {
    return this.request((request_id) => ({ type: "pause", request_id }));
  }

  async resume(version: number): Promise<void> {
    await this.ready();
    this.send({ type: "resume", version });
  }

  policy(version: number): void {
    this.send({ type: "policy", version });
  }

  credit(n: number): void {
    this.send({ type: "credit", n });
  }

  ack(resultIds: string[]): void {
    if (resultIds.length === 0) return;
    const kept = this.options.ackedIdsKept ?? 100_000;
    for (const id of resultIds) {
      if (!this.unacked.delete(id)) continue;
      this.acked.add(id);
      if (this.acked.size > kept) this.acked.delete(this.acked.values().next().value!);
    }
    this.send({ type: "ack", result_ids: resultIds });
  }

  /** Result ids held to drop repeats: those not yet acknowledged plus the recently acknowledged. */
  get rememberedIds(): number {
    return this.unacked.size + this.acked.size;
  }

  cancelGroup(groupId: string): void {
    this.send({ type: "cancel_group", group_id: groupId });
  }

  close(): void {
    this.closed = true;
    this.ws?.close();
    for (const p of this.pending.values()) p.reject(new Error("client closed"));
    this.pending.clear();
  }

  /** Drops the connection as a network blip would; the client reconnects by itself. */
  dropConnection(): void {
    this.ws?.close();
  }

  private async request<T>(build: (requestId: string) => TrainerToCoordinator): Promise<T> {
    await this.ready();
    const requestId = `req-${++this.nextRequest}`;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(requestId, { resolve, reject });
      this.send(build(requestId));
    });
  }

  private send(message: TrainerToCoordinator): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  private open(): void {
    const url = `${this.options.url.replace(/^http/, "ws")}/v1/trainer`;
    // Bun's and Node's WebSocket accept headers in the constructor's options.
    const ws = new (WebSocket as any)(url, { headers: { authorization: `Bearer ${this.options.token}` } }) as WebSocket;
    this.ws = ws;
    ws.binaryType = "arraybuffer";
    ws.onopen = () =>
      ws.send(
        JSON.stringify({
          type: "hello",
          protocol_version: TRAINER_PROTOCOL_VERSION,
          trainer_id: this.options.trainerId,
          encoding: this.options.encoding ?? "binary",
          ...(this.secret && { trainer_secret: this.secret }),
        }),
      );
    ws.onmessage = (event) => void this.onFrame(event.data as string | ArrayBuffer);
    ws.onclose = (event) => {
      if (this.ws !== ws || this.closed) return;
      // The coordinator refused this trainer id's identity (its error frame went to onError): retrying cannot help.
      if (event.code === IDENTITY_CLOSE.unproven) return;
      this.connected = new Promise((resolve) => (this.markConnected = resolve));
      setTimeout(() => this.open(), this.options.reconnectDelayMs ?? 200);
    };
    ws.onerror = () => {};
  }

  private async onFrame(data: string | ArrayBuffer): Promise<void> {
    const message = parseCoordinatorFrame(data);
    switch (message.type) {
      case "welcome":
        if (message.trainer_secret) {
          this.secret = message.trainer_secret;
          this.options.onSecret?.(message.trainer_secret);
        }
        this.credit(this.options.window ?? 64);
        this.markConnected();
        return;
      case "submitted":
        this.settle(message.request_id, { group_id: message.group_id, rollout_ids: message.rollout_ids });
        return;
      case "paused":
        this.settle(message.request_id, { nodes: message.nodes });
        return;
      case "task_stats": {
        const { type: _type, request_id, ...answer } = message;
        this.settle(request_id, answer);
        return;
      }
      case "result": {
        const id = message.result.result_id;
        if (this.unacked.has(id) || this.acked.has(id)) {
          // A repeat: its credit comes back; it is acknowledged again only if it was already (one
          // still unacknowledged is the caller's to acknowledge once processed).
          this.counts.duplicates++;
          if (this.acked.has(id)) this.send({ type: "ack", result_ids: [id] });
          this.credit(1);
          return;
        }
        this.unacked.add(id);
        this.counts.results++;
        await this.options.onResult?.(message.result);
        if (this.options.autoAck ?? true) this.autoAck(id);
        return;
      }
      case "group":
        this.options.onGroup?.(message);
        return;
      case "error":
        if (message.request_id && this.pending.has(message.request_id)) {
          this.pending.get(message.request_id)!.reject(new Error(`${message.code}: ${message.message}`));
          this.pending.delete(message.request_id);
        } else {
          this.options.onError?.({ code: message.code, message: message.message });
        }
        return;
      case "resumed":
        return;
    }
  }

  private autoAck(id: string): void {
    this.autoAcked.push(id);
    if (this.autoAcked.length > 1) return;
    setImmediate(() => {
      const ids = this.autoAcked;
      this.autoAcked = [];
      this.ack(ids);
      this.credit(ids.length);
    });
  }

  private settle(requestId: string, value: unknown): void {
    this.pending.get(requestId)?.resolve(value);
    this.pending.delete(requestId);
  }
}
