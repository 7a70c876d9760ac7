// Why: the one place where the coordinator handles a result's token arrays. A result arrives
// as a trace frame (header + trace blob: stored as the small JSON session plus the blob as it
// is) or as JSON from an older node (stored whole, as before blobs existed); it is streamed to each
// trainer in the encoding it asked for — a blob forwarded untouched to a binary trainer and decoded
// only for a JSON one, a whole JSON result packed only for a binary one.
import { PolarError } from "../protocol/errors.ts";
import type { ReportedResult } from "../protocol/node-link.ts";
import { checkTraceBlob, encodeTraceFrame, packTraces, TRACE_ARRAY_KEYS, traceTokenCounts, unpackTraces, type TraceEncoding } from "../protocol/trace-frame.ts";
import type { StreamedResult } from "../protocol/trainer-stream.ts";
import { resultFacts, type ResultFacts } from "../lib/result-facts.ts";
import { isUsable, streamedFromRow } from "./results.ts";
import type { ResultWithTraces } from "./store/repo.ts";

type TokenCounts = { prompt: number; response: number; trainable: number };

/** A result as the coordinator keeps it: the session (its traces without arrays when `traces` is set) and the blob. */
export interface PackedResult {
  session: ReportedResult;
  traces: Uint8Array | null;
  /** Per trace, read once from the blob's length table and mask (null: `session` has the arrays). */
  tokens: TokenCounts[] | null;
}

/** A result a trainer is owed, with its blob (null: its traces are whole in `result`). */
export interface OutgoingResult {
  result: StreamedResult;
  traces: Uint8Array | null;
}

const withTraces = (session: ReportedResult, traces: Record<string, unknown>[]): ReportedResult => ({ ...session, trajectory: { ...session.trajectory, traces } });

/** A JSON result (an older node's, or one the coordinator made): kept whole, so JSON trainers get it as before. */
export function wholeResult(session: ReportedResult): PackedResult {
  return { session, traces: null, tokens: null };
}

/**
 * A result from a trace frame: the blob must hold exactly the header's traces, and the header's
 * traces no arrays of their own (which copy would be the real one?). Throws `bad_request`.
 */
export function packedFromFrame(session: ReportedResult, blob: Uint8Array): PackedResult {
  const traces = session.trajectory.traces as Record<string, unknown>[];
  const layout = checkTraceBlob(blob, traces.length);
  for (const [i, trace] of traces.entries()) {
    const key = TRACE_ARRAY_KEYS.find((k) => k in trace);
    if (key) throw new PolarError("bad_request", `trace ${i} of a trace frame carries ${key} in its header`);
  }
  return { session, traces: blob, tokens: traceTokenCounts(blob, layout) };
}

/** Counts toward early stop (results.ts's rule; on the blob's counts when packed). */
export function isUsablePacked(p: PackedResult): boolean {
  if (!p.tokens) return isUsable(p.session);
  return p.session.status === "COMPLETED" && p.tokens.some((t) => t.prompt > 0 && t.response > 0 && t.trainable > 0);
}

/** lib/result-facts.ts's facts, its token counts taken from the blob when packed. */
export function factsOfPacked(p: PackedResult): ResultFacts {
  const facts = resultFacts(p.session);
  if (!p.tokens) return facts;
  const tokens = { prompt: 0, response: 0, trainable: 0 };
  for (const t of p.tokens) {
    tokens.prompt += t.prompt;
    tokens.response += t.response;
    tokens.trainable += t.trainable;
  }
  return { ...facts, tokens };
}

/** A stored session, whole (the rollout API, the dashboard): its blob's arrays put back. */
export function wholeSession(row: Pick<ResultWithTraces, "session" | "traces">): Record<string, unknown> {
  if (!row.traces) return row.session;
  const session = row.session as ReportedResult;
  return withTraces(session, unpackTraces(session.trajectory.traces as Record<string, unknown>[], row.traces));
}

/** A stored result as its trainer is owed it. */
export function outgoingFromRow(row: ResultWithTraces): OutgoingResult {
  return { result: streamedFromRow(row), traces: row.traces };
}

/**
 * The frame a trainer receives: a trace frame for a binary trainer (the blob as stored; a row
 * without one packed now, or JSON when it cannot be), a JSON text frame otherwise.
 */
export function resultFrame(out: OutgoingResult, encoding: TraceEncoding): string | Uint8Array {
  if (encoding === "binary") {
    if (out.traces) return encodeTraceFrame({ type: "result", result: out.result }, out.traces);
    const packed = packTraces(out.result.traces);
    if (packed) return encodeTraceFrame({ type: "result", result: { ...out.result, traces: packed.rest } }, packed.blob);
  }
  const traces = out.traces ? unpackTraces(out.result.traces, out.traces) : out.result.traces;
  return JSON.stringify({ type: "result", result: { ...out.result, traces } });
}

/** Bytes a result holds in memory: its blob, or ~8 bytes a token in its JSON arrays. */
export function heldBytes(out: OutgoingResult): number {
  if (out.traces) return 1024 + out.traces.byteLength;
  let tokens = 0;
  for (const trace of out.result.traces) for (const key of TRACE_ARRAY_KEYS) if (Array.isArray(trace[key])) tokens += (trace[key] as unknown[]).length;
  return 1024 + tokens * 8;
}
