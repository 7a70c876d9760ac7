// Why: both WebSocket endpoints treat frames alike — JSON parsed against the endpoint's schema,
// handled strictly in arrival order per connection, a bad frame answered with an error frame and
// a peer that keeps sending them disconnected.
import type { ServerWebSocket } from "bun";
import type { z } from "zod";
import { asPolarError, describeCause, PolarError, wsErrorFrame } from "../protocol/errors.ts";
import { decodeTraceFrame } from "../protocol/trace-frame.ts";

export interface SocketData {
  role: "node" | "trainer";
  badFrames: number;
  /** Frames of one connection are handled one after another. */
  chain: Promise<void>;
  /** Set by the endpoint once the handshake succeeded. */
  attached: unknown;
  onClose: (() => void) | null;
  /** Woken by the socket's `drain` (its send buffer emptied). */
  drainWaiters: (() => void)[];
}

/** Frames queued beyond this wait for the socket to drain (results are large; memory stays bounded). */
export const SEND_HIGH_WATER_BYTES = 8 * 1024 * 1024;

/** Resolves once the socket's send buffer is below the high-water mark (or the socket closed). */
export function drained(ws: ServerWebSocket<SocketData>): Promise<void> {
  if (ws.readyState !== 1 || ws.getBufferedAmount() < SEND_HIGH_WATER_BYTES) return Promise.resolve();
  return new Promise((resolve) => ws.data.drainWaiters.push(resolve));
}

export function wakeDrainWaiters(ws: ServerWebSocket<SocketData>): void {
  const waiters = ws.data.drainWaiters.splice(0);
  for (const wake of waiters) wake();
}

/** Sends a frame (when the socket is open) and returns its size in bytes. */
export function sendJson(ws: ServerWebSocket<SocketData>, message: unknown): number {
  if (ws.readyState !== 1) return 0;
  const text = JSON.stringify(message);
  ws.send(text);
  return text.length;
}

/** Parses a frame; on failure answers with an error frame and counts it against the peer. */
export function parseFrame<S extends z.ZodType>(ws: ServerWebSocket<SocketData>, raw: string | Buffer, schema: S, maxBadFrames: number): z.infer<S> | null {
  let value: unknown;
  try {
    value = JSON.parse(typeof raw === "string" ? raw : raw.toString("utf8"));
  } catch {
    return badFrame(ws, "frame is not JSON", maxBadFrames);
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join(".") || "(frame)"}: ${i.message}`);
  return badFrame(ws, `invalid frame: ${issues.join("; ")}`, maxBadFrames);
}

/**
 * Parses a binary trace frame: its header against the schema, then `check` on the header and a
 * copy of its blob (the socket's buffer is not ours once this returns); a failure of either is a
 * bad frame.
 */
export function parseTraceFrame<S extends z.ZodType, T>(
  ws: ServerWebSocket<SocketData>,
  raw: Buffer,
  schema: S,
  check: (message: z.infer<S>, blob: Uint8Array) => T,
  maxBadFrames: number,
): { message: z.infer<S>; checked: T } | null {
  try {
    const { header, blob } = decodeTraceFrame(raw);
    const parsed = schema.safeParse(header);
    if (!parsed.success) {
      const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join(".") || "(frame)"}: ${i.message}`);
      return badFrame(ws, `invalid trace frame header: ${issues.join("; ")}`, maxBadFrames);
    }
    return { message: parsed.data, checked: check(parsed.data, blob.slice()) };
  } catch (err) {
    return badFrame(ws, asPolarError(err).message, maxBadFrames);
  }
}

function badFrame(ws: ServerWebSocket<SocketData>, message: string, maxBadFrames: number): null {
  ws.data.badFrames++;
  sendJson(ws, wsErrorFrame(new PolarError("bad_request", message)));
  if (ws.data.badFrames >= maxBadFrames) ws.close(1008, "too many bad frames");
  return null;
}

/** Queues a handler behind the connection's earlier frames; a thrown error becomes an error frame. */
export function inOrder(ws: ServerWebSocket<SocketData>, handle: () => Promise<void> | void): void {
  ws.data.chain = ws.data.chain.then(handle).catch((err: unknown) => {
    const e = asPolarError(err);
    // The peer learns only the code and a safe message; the log gets the kind of error, never frame contents.
    if (e.code === "internal")
      console.error(
        JSON.stringify({ ts: new Date().toISOString(), level: "error", event: "ws.frame_failed", role: ws.data.role, cause: describeCause(e.cause) }),
      );
    sendJson(ws, wsErrorFrame(e));
  });
}
