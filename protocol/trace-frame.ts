// Why: token arrays dominate a result (thousands to hundreds of thousands of ids a trace), and
// writing them as JSON numbers — then parsing them back at every hop — is what limited the
// coordinator's stream. This module defines the binary form they travel and are stored in: a
// *trace blob* (the traces' token ids, loss masks and logprobs, packed) and a *trace frame* (one
// WebSocket binary message: a small JSON header plus a trace blob). The coordinator checks a
// blob's structure (lengths and bounds, never its values) and forwards it as it came; the
// clients decode it. Layout: docs/coordinator.md "Binary trace frames".
import { z } from "zod";
import { PolarError } from "./errors.ts";
import type { ReportedResult } from "./node-link.ts";

/** The per-token arrays of a trace that travel packed, in the blob's length-table order. */
export const TRACE_ARRAY_KEYS = ["prompt_ids", "response_ids", "loss_mask", "response_logprobs"] as const;
export type TraceArrayKey = (typeof TRACE_ARRAY_KEYS)[number];

/** "PTF1": the first four bytes of every trace frame (a JSON text frame can never start so). */
export const TRACE_FRAME_MAGIC = 0x31465450;
export const TRACE_ENCODINGS = ["json", "binary"] as const;
/**
 * How result frames reach a trainer (its hello's `encoding`): `json` text frames (the default:
 * what older clients get), or `binary` trace frames — the `result` message as a JSON header, its
 * traces' token arrays packed after it.
 */
export const TraceEncoding = z.enum(TRACE_ENCODINGS);
export type TraceEncoding = z.infer<typeof TraceEncoding>;

/** Traces a blob may hold, and tokens an array may hold (far above any real rollout). */
export const TRACE_BLOB_LIMITS = { maxTraces: 65_536, maxArrayLength: 1 << 28 } as const;

const ABSENT = -1;
/** Each trace's length table row: one int32 per array key. */
const ROW_BYTES = TRACE_ARRAY_KEYS.length * 4;

if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) throw new Error("trace frames are little-endian; this platform is not");

/** Lengths of one trace's arrays in a blob; null where the trace has no such array. */
export type TraceLengths = Record<TraceArrayKey, number | null>;

/** What a checked blob holds, without its values having been read. */
export interface TraceBlobLayout {
  traces: TraceLengths[];
  /** Byte offsets (from the blob's start) of the float64, int32 and uint8 sections. */
  f64At: number;
  i32At: number;
  u8At: number;
}

const pad8 = (n: number) => (n + 7) & ~7;

// Little-endian 32-bit fields read and written byte by byte: a DataView needs the typed array's
// `.buffer`, which is slow on a buffer Bun handed out (a WebSocket message: ~30 µs a frame in the
// coordinator's profile, for two reads).
const readI32 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24);
const readU32 = (b: Uint8Array, at: number) => readI32(b, at) >>> 0;
function writeI32(b: Uint8Array, at: number, v: number): void {
  b[at] = v;
  b[at + 1] = v >> 8;
  b[at + 2] = v >> 16;
  b[at + 3] = v >> 24;
}

// One indexed pass per array, checking while copying (false: a value the blob cannot carry exactly).
function copyInt32(src: unknown[], dst: Int32Array, at: number): boolean {
  for (let k = 0; k < src.length; k++) {
    const x = src[k];
    if (typeof x !== "number" || (x | 0) !== x) return false;
    dst[at + k] = x;
  }
  return true;
}

function copyMask(src: unknown[], dst: Uint8Array, at: number): boolean {
  for (let k = 0; k < src.length; k++) {
    const x = src[k];
    if (x !== 0 && x !== 1) return false;
    dst[at + k] = x;
  }
  return true;
}

function copyLogprobs(src: unknown[], dst: Float64Array, at: number): boolean {
  for (let k = 0; k < src.length; k++) {
    const x = src[k];
    if (x === null) dst[at + k] = Number.NaN;
    else if (typeof x === "number" && x - x === 0) dst[at + k] = x;
    else return false;
  }
  return true;
}

type TraceArrays = Record<TraceArrayKey, unknown[] | undefined>;

/**
 * Splits traces into what stays JSON (every other field) and a blob of their token arrays; null
 * when an array is not representable exactly (an id outside int32, a mask value other than 0/1,
 * a logprob that is neither a finite number nor null), so the caller keeps such a result as JSON.
 */
export function packTraces(traces: readonly Record<string, unknown>[]): { rest: Record<string, unknown>[]; blob: Uint8Array } | null {
  if (traces.length > TRACE_BLOB_LIMITS.maxTraces) return null;
  const rest: Record<string, unknown>[] = [];
  const arrays: TraceArrays[] = [];
  const lengths: TraceLengths[] = [];
  for (const trace of traces) {
    const { prompt_ids, response_ids, loss_mask, response_logprobs, ...others } = trace;
    const row = { prompt_ids, response_ids, loss_mask, response_logprobs };
    const len = {} as TraceLengths;
    for (const k of TRACE_ARRAY_KEYS) {
      const v = row[k];
      if (v !== undefined && (!Array.isArray(v) || v.length > TRACE_BLOB_LIMITS.maxArrayLength)) return null;
      len[k] = v === undefined ? null : v.length;
    }
    arrays.push(row as TraceArrays);
    lengths.push(len);
    rest.push(others);
  }
  const layout = layoutOf(lengths);
  const buffer = new ArrayBuffer(layout.total);
  const blob = new Uint8Array(buffer);
  writeLengthTable(blob, lengths);
  const f64 = new Float64Array(buffer, layout.f64At, layout.f64Count);
  const i32 = new Int32Array(buffer, layout.i32At, layout.i32Count);
  let f = 0;
  let i = 0;
  let u = layout.u8At;
  for (const a of arrays) {
    const none: unknown[] = [];
    const [lp, p, r, m] = [a.response_logprobs ?? none, a.prompt_ids ?? none, a.response_ids ?? none, a.loss_mask ?? none];
    if (!copyLogprobs(lp, f64, f) || !copyInt32(p, i32, i) || !copyInt32(r, i32, i + p.length) || !copyMask(m, blob, u)) return null;
    f += lp.length;
    i += p.length + r.length;
    u += m.length;
  }
  return { rest, blob };
}

function layoutOf(lengths: readonly TraceLengths[]) {
  let f64Count = 0;
  let i32Count = 0;
  let u8Count = 0;
  for (const l of lengths) {
    f64Count += l.response_logprobs ?? 0;
    i32Count += (l.prompt_ids ?? 0) + (l.response_ids ?? 0);
    u8Count += l.loss_mask ?? 0;
  }
  const f64At = pad8(8 + lengths.length * ROW_BYTES);
  const i32At = f64At + f64Count * 8;
  const u8At = i32At + i32Count * 4;
  return { f64At, i32At, u8At, f64Count, i32Count, total: u8At + u8Count };
}

function writeLengthTable(blob: Uint8Array, lengths: readonly TraceLengths[]): void {
  writeI32(blob, 0, lengths.length);
  writeI32(blob, 4, 0);
  lengths.forEach((l, t) => TRACE_ARRAY_KEYS.forEach((k, j) => writeI32(blob, 8 + t * ROW_BYTES + j * 4, l[k] ?? ABSENT)));
}

const malformed = (why: string) => new PolarError("bad_request", `malformed trace blob: ${why}`);

/**
 * Checks a blob's structure — its trace count (`expectedTraces` when given), every length within
 * bounds, the sections adding up to exactly its size — reading only its length table.
 */
export function checkTraceBlob(blob: Uint8Array, expectedTraces?: number): TraceBlobLayout {
  if (blob.byteLength < 8) throw malformed("shorter than its header");
  const count = readU32(blob, 0);
  if (readU32(blob, 4) !== 0) throw malformed("reserved bytes are not zero");
  if (count > TRACE_BLOB_LIMITS.maxTraces) throw malformed(`${count} traces (at most ${TRACE_BLOB_LIMITS.maxTraces})`);
  if (expectedTraces !== undefined && count !== expectedTraces) throw malformed(`${count} traces in the blob, ${expectedTraces} in the header`);
  if (blob.byteLength < 8 + count * ROW_BYTES) throw malformed("shorter than its length table");
  const traces: TraceLengths[] = [];
  for (let t = 0; t < count; t++) {
    const row = {} as TraceLengths;
    TRACE_ARRAY_KEYS.forEach((k, j) => {
      const n = readI32(blob, 8 + t * ROW_BYTES + j * 4);
      if (n !== ABSENT && (n < 0 || n > TRACE_BLOB_LIMITS.maxArrayLength)) throw malformed(`trace ${t} ${k} length ${n}`);
      row[k] = n === ABSENT ? null : n;
    });
    traces.push(row);
  }
  const layout = layoutOf(traces);
  if (layout.total !== blob.byteLength) throw malformed(`${blob.byteLength} bytes where its lengths say ${layout.total}`);
  return { traces, f64At: layout.f64At, i32At: layout.i32At, u8At: layout.u8At };
}

/** Tokens of each trace — prompt, response, trainable (mask 1) — read from a checked blob. */
export function traceTokenCounts(blob: Uint8Array, layout: TraceBlobLayout = checkTraceBlob(blob)): { prompt: number; response: number; trainable: number }[] {
  let u = layout.u8At;
  return layout.traces.map((l) => {
    let trainable = 0;
    for (const end = u + (l.loss_mask ?? 0); u < end; u++) if (blob[u] === 1) trainable++;
    return { prompt: l.prompt_ids ?? 0, response: l.response_ids ?? 0, trainable };
  });
}

/** A blob whose byte offset suits its typed views (8-aligned), copied only when it is not. */
function aligned(blob: Uint8Array): Uint8Array {
  return blob.byteOffset % 8 === 0 ? blob : blob.slice();
}

// `view[from, from + n)` as a plain array, by index: Array.from walks a typed array's iterator,
// ~10× slower. One function per view type keeps each loop monomorphic.
function ints(view: Int32Array, from: number, n: number): number[] {
  const out = new Array<number>(n);
  for (let k = 0; k < n; k++) out[k] = view[from + k]!;
  return out;
}

function bytes(view: Uint8Array, from: number, n: number): number[] {
  const out = new Array<number>(n);
  for (let k = 0; k < n; k++) out[k] = view[from + k]!;
  return out;
}

function logprobs(view: Float64Array, from: number, n: number): (number | null)[] {
  const out = new Array<number | null>(n);
  for (let k = 0; k < n; k++) {
    const v = view[from + k]!;
    out[k] = v !== v ? null : v; // NaN: null when packed
  }
  return out;
}

/**
 * The traces again: `rest[i]` with its arrays from the blob. Refuses a malformed blob, a mask
 * value other than 0/1 and a `rest[i]` that carries an array of its own; a NaN logprob (null when packed: not returned by the engine) is null.
 */
export function unpackTraces(rest: readonly Record<string, unknown>[], blob: Uint8Array): Record<string, unknown>[] {
  const layout = checkTraceBlob(blob, rest.length);
  const b = aligned(blob);
  const f64 = new Float64Array(b.buffer, b.byteOffset + layout.f64At, (layout.i32At - layout.f64At) / 8);
  const i32 = new Int32Array(b.buffer, b.byteOffset + layout.i32At, (layout.u8At - layout.i32At) / 4);
  let f = 0;
  let i = 0;
  let u = layout.u8At;
  return layout.traces.map((l, t) => {
    const key = TRACE_ARRAY_KEYS.find((k) => k in rest[t]!);
    if (key) throw malformed(`trace ${t} carries ${key} beside the blob's`);
    const trace: Record<string, unknown> = { ...rest[t] };
    if (l.prompt_ids !== null) {
      trace.prompt_ids = ints(i32, i, l.prompt_ids);
      i += l.prompt_ids;
    }
    if (l.response_ids !== null) {
      trace.response_ids = ints(i32, i, l.response_ids);
      i += l.response_ids;
    }
    if (l.loss_mask !== null) {
      const mask = bytes(b, u, l.loss_mask);
      u += l.loss_mask;
      if (mask.some((m) => m > 1)) throw malformed(`trace ${t} loss_mask holds a value other than 0 or 1`);
      trace.loss_mask = mask;
    }
    if (l.response_logprobs !== null) {
      trace.response_logprobs = logprobs(f64, f, l.response_logprobs);
      f += l.response_logprobs;
    }
    return trace;
  });
}

// ---- frames -------------------------------------------------------------------------------------

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * One binary message: magic, header length (uint32), the header as UTF-8 JSON, zero padding to
 * an 8-byte boundary, then the blob as it is.
 */
export function encodeTraceFrame(header: unknown, blob: Uint8Array): Uint8Array {
  const json = encoder.encode(JSON.stringify(header));
  const blobAt = pad8(8 + json.byteLength);
  const frame = new Uint8Array(new ArrayBuffer(blobAt + blob.byteLength));
  writeI32(frame, 0, TRACE_FRAME_MAGIC);
  writeI32(frame, 4, json.byteLength);
  frame.set(json, 8);
  frame.set(blob, blobAt);
  return frame;
}

/** Whether a binary message is a trace frame (by its magic). */
export function isTraceFrame(bytes: Uint8Array): boolean {
  return bytes.byteLength >= 8 && readU32(bytes, 0) === TRACE_FRAME_MAGIC;
}

/**
 * A frame's header (parsed JSON, for the caller's schema to check) and its blob (a view, not
 * copied; its structure is the caller's to check against the header's traces).
 */
export function decodeTraceFrame(bytes: Uint8Array, maxHeaderBytes = 1 << 20): { header: unknown; blob: Uint8Array } {
  if (!isTraceFrame(bytes)) throw new PolarError("bad_request", "not a trace frame");
  const headerBytes = readU32(bytes, 4);
  if (headerBytes > maxHeaderBytes) throw new PolarError("bad_request", `trace frame header of ${headerBytes} bytes (at most ${maxHeaderBytes})`);
  const blobAt = pad8(8 + headerBytes);
  if (blobAt > bytes.byteLength) throw new PolarError("bad_request", "trace frame shorter than its header");
  let header: unknown;
  try {
    header = JSON.parse(decoder.decode(bytes.subarray(8, 8 + headerBytes)));
  } catch {
    throw new PolarError("bad_request", "trace frame header is not UTF-8 JSON");
  }
  return { header, blob: bytes.subarray(blobAt) };
}

/**
 * A node's `result` message as one trace frame (sent when the coordinator's welcome says
 * `trace_frames`): the message as the header, its traces without their arrays, which follow
 * packed. Null when they cannot be packed exactly: the node sends JSON then.
 */
export function nodeResultFrame(rolloutId: string, attempt: number, result: ReportedResult): Uint8Array | null {
  const packed = packTraces(result.trajectory.traces as Record<string, unknown>[]);
  if (!packed) return null;
  const header = { type: "result", rollout_id: rolloutId, attempt, result: { ...result, trajectory: { ...result.trajectory, traces: packed.rest } } };
  return encodeTraceFrame(header, packed.blob);
}
