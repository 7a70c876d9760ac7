// Why: the contract each API dialect implements, so the gateway's request path (auth, pause,
// engine call, recording, streaming) is written once for all three wire formats.
import type { Dialect as DialectName } from "../../../protocol/calls.ts";
import type { PolarError } from "../../../protocol/errors.ts";
import type { PivotRequest, PivotResponse } from "../pivot.ts";

/** One server-sent event, already framed (`event: …\ndata: …\n\n` or `data: …\n\n`). */
export type SseFrame = string;

export interface Dialect {
  readonly name: DialectName;
  /** Validates and converts a client body; throws PolarError("bad_request") on bad input. */
  parseRequest(body: unknown): PivotRequest;
  /** The non-streaming JSON body. */
  renderResponse(response: PivotResponse, request: PivotRequest): unknown;
  /** The complete SSE stream for a finished response, in the order the official SDKs expect. */
  renderStream(response: PivotResponse, request: PivotRequest): SseFrame[];
  /** HTTP status + body in this dialect's error shape. */
  renderError(error: PolarError): { status: number; body: unknown };
  /** Error frame(s) for a stream whose headers already went out. */
  renderStreamError(error: PolarError): SseFrame[];
}

/** Frames one SSE event; `event` omitted gives a data-only frame (Chat Completions style). */
export function sseFrame(data: unknown, event?: string): SseFrame {
  const payload = typeof data === "string" ? data : JSON.stringify(data);
  return `${event ? `event: ${event}\n` : ""}data: ${payload}\n\n`;
}
