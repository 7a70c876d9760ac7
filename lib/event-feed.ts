// Why: `GET /events` on the node and the coordinator — a Server-Sent Events feed in NVIDIA
// Polar's frame shape (`data: {"type", "ts", "data"}`, a `hello` frame first, a `ping` frame as
// heartbeat), so tools written for upstream's feed read ours; each frame also has an `id:` and the
// last frames are kept, so a reader that reconnects with `Last-Event-ID` misses nothing recent.
// A reader that stops reading is cut off (it reconnects and catches up) instead of growing memory.

export interface FeedEvent {
  /** Increasing from 1 for this process's feed. */
  id: number;
  type: string;
  /** ISO 8601, UTC. */
  ts: string;
  data: Record<string, unknown>;
}

export interface EventFeedOptions {
  /** Frames kept for readers that reconnect (default 2048). */
  keep?: number;
  /** Heartbeat `ping` interval (default 15 s, as upstream). */
  heartbeatMs?: number;
  /** Bytes queued for one reader before it is cut off (default 4 MiB). */
  maxQueuedBytes?: number;
}

const encoder = new TextEncoder();

function frame(e: Omit<FeedEvent, "id"> & { id?: number }): Uint8Array {
  const body = JSON.stringify({ type: e.type, ts: e.ts, data: e.data });
  return encoder.encode(`${e.id !== undefined ? `id: ${e.id}\n` : ""}data: ${body}\n\n`);
}

interface Reader {
  send(bytes: Uint8Array): void;
}

export class EventFeed {
  private readonly kept: FeedEvent[] = [];
  private readonly readers = new Set<Reader>();
  private nextId = 1;
  private readonly keep: number;
  private readonly heartbeatMs: number;
  private readonly maxQueuedBytes: number;

  constructor(options: EventFeedOptions = {}) {
    this.keep = options.keep ?? 2048;
    this.heartbeatMs = options.heartbeatMs ?? 15_000;
    this.maxQueuedBytes = options.maxQueuedBytes ?? 4 * 1024 * 1024;
  }

  publish(type: string, data: Record<string, unknown>): FeedEvent {
    const event: FeedEvent = { id: this.nextId++, type, ts: new Date().toISOString(), data };
    this.kept.push(event);
    if (this.kept.length > this.keep) this.kept.shift();
    if (this.readers.size > 0) {
      const bytes = frame(event);
      for (const r of this.readers) r.send(bytes);
    }
    return event;
  }

  /** The frames kept after `afterId` (oldest first). */
  since(afterId: number): FeedEvent[] {
    return this.kept.filter((e) => e.id > afterId);
  }

  get readerCount(): number {
    return this.readers.size;
  }

  /** A `text/event-stream` response that lasts until the client goes away (`signal`). */
  response(signal: AbortSignal, lastEventId: string | null): Response {
    const after = lastEventId !== null && /^\d+$/.test(lastEventId) ? Number(lastEventId) : null;
    let reader: Reader | null = null;
    let heartbeat: ReturnType<typeof setInterval> | null = null;
    const stop = () => {
      if (reader) this.readers.delete(reader);
      if (heartbeat) clearInterval(heartbeat);
      reader = null;
      heartbeat = null;
    };
    const stream = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          const send = (bytes: Uint8Array) => {
            if (!reader) return;
            if ((controller.desiredSize ?? 0) < -this.maxQueuedBytes) {
              stop();
              controller.close();
              return;
            }
            controller.enqueue(bytes);
          };
          reader = { send };
          // Upstream's first frame; then what the reader missed, then live frames.
          send(frame({ type: "hello", ts: new Date().toISOString(), data: { last_event_id: this.nextId - 1 } }));
          if (after !== null) for (const e of this.since(after)) send(frame(e));
          this.readers.add(reader);
          heartbeat = setInterval(() => send(frame({ type: "ping", ts: new Date().toISOString(), data: {} })), this.heartbeatMs);
          signal.addEventListener("abort", () => {
            stop();
            try {
              controller.close();
            } catch {
              // already closed
            }
          });
        },
        cancel: stop,
      },
      { highWaterMark: 0, size: (chunk) => chunk?.byteLength ?? 0 },
    );
    return new Response(stream, {
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive", "x-accel-buffering": "no" },
    });
  }
}

/** One parsed frame of such a feed (readers in tests, the demo, the dashboard's twin in JS). */
export interface ParsedFrame {
  id: number | null;
  type: string;
  ts: string;
  data: Record<string, unknown>;
}

/** Reads SSE frames from a response body until `stop` returns true or the stream ends. */
export async function readFeed(body: ReadableStream<Uint8Array>, onFrame: (f: ParsedFrame) => boolean | void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let id: number | null = null;
        const data: string[] = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("id:")) id = Number(line.slice(3).trim());
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (data.length === 0) continue;
        const parsed = JSON.parse(data.join("\n")) as { type: string; ts: string; data: Record<string, unknown> };
        if (onFrame({ id, type: parsed.type, ts: parsed.ts, data: parsed.data }) === true) return;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
