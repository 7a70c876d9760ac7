// Why: the one place where the coordinator handles a result's token arrays. A result arrives
// as a trace frame (header + trace blob: stored as the small JSON session plus the blob as it
// is) or as JSON from an older node (stored whole, as before blobs existed); it is streamed to each
// trainer in the encoding it asked for — a blob forwarded untouched to a binary trainer and decoded
// only for a JSON one, a whole JSON result packed only for a binary one.
import { ReportedResult, type ReportedResultHeader } from "../protocol/node-link.ts";
import { checkTraceBlob, encodeTraceFrame, packTraces, TRACE_ARRAY_KEYS, traceTokenCounts, unpackTraces, type TraceEncoding } from "../protocol/trace-frame.ts";
import { resultFacts, type ResultFacts } from "../lib/result-facts.ts";
import { isUsable, streamedFromRow, type StreamedHeader } from "./results.ts";
import type { ResultWithTraces } from "./store/repo.ts";

type TokenCounts = { prompt: number; response: number; trainable: number };

/**
 * A result as the coordinator keeps it: whole (JSON from an older node, or made here), or from a
 * trace frame — its session's traces without arrays, the blob holding them, and per trace the
 * token counts read once from the blob's length table and mask.
 */
export type PackedResult =
  { session: ReportedResult; traces: null; tokens: null } | { session: ReportedResultHeader; traces: Uint8Array; tokens: TokenCounts[] };

/** A result a trainer is owed, with its blob (null: its traces are whole in `result`). */
export interface OutgoingResult {
  result: StreamedHeader;
  traces: Uint8Array | null;
}

/** A JSON result (an older node's, or one the coordinator made): kept whole, so JSON trainers get it as before. */
export function wholeResult(session: ReportedResult): PackedResult {
  return { session, traces: null, tokens: null };
}

/** A result from a trace frame (its header's traces carry no arrays: NodeResultHeader): the blob must hold exactly those traces. Throws `bad_request`. */
export function packedFromFrame(session: ReportedResultHeader, blob: Uint8Array): PackedResult {
  const layout = checkTraceBlob(blob, session.trajectory.traces.length);
  return { session, traces: blob, tokens: traceTokenCounts(blob, layout) };
}

/** Counts toward early stop (results.ts's rule; on the blob's counts when packed). */
export function isUsablePacked(p: PackedResult): boolean {
  if (p.traces === null) return isUsable(p.session);
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

/** A stored session without a blob whose traces carry their arrays: whole as it was checked on arrival. */
function isWhole(session: ReportedResultHeader): session is ReportedResult {
  return session.trajectory.traces.every((t) => TRACE_ARRAY_KEYS.every((key) => Array.isArray((t as Record<string, unknown>)[key])));
}

/**
 * A stored session, whole (the rollout API, the dashboard, read at every poll): as stored when it
 * has no blob, else its blob's arrays put back and checked as a ReportedResult (a node's blob is
 * checked only for its structure on arrival).
 */
export function wholeSession(row: Pick<ResultWithTraces, "session" | "traces">): ReportedResult {
  const { session, traces } = row;
  if (!traces && isWhole(session)) return session;
  return ReportedResult.parse(
    traces ? { ...session, trajectory: { ...session.trajectory, traces: unpackTraces(session.trajectory.traces, traces) } } : session,
  );
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
  for (const trace of out.result.traces as Record<string, unknown>[])
    for (const key of TRACE_ARRAY_KEYS) if (Array.isArray(trace[key])) tokens += (trace[key] as unknown[]).length;
  return 1024 + tokens * 8;
}
