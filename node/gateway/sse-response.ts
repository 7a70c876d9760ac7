// Why: harnesses stream every call, but the gateway must answer engine failures with a real
// HTTP error status (which harnesses retry) and must not let a long generation trip a client's
// idle timeout. So a streamed call waits a short head start for the engine; if the answer is
// not there yet it commits to 200 and sends SSE comments as keep-alives until it is.
import { asPolarError, type PolarError } from "../../protocol/errors.ts";
import type { Dialect, SseFrame } from "./dialects/dialect.ts";
import type { PivotRequest, PivotResponse } from "./pivot.ts";

const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};

export interface StreamTiming {
  headStartMs: number;
  keepAliveMs: number;
}

type Settled = { ok: true; response: PivotResponse } | { ok: false; error: PolarError };

function settle(result: Promise<PivotResponse>): Promise<Settled> {
  return result.then(
    (response) => ({ ok: true as const, response }),
    (err) => ({ ok: false as const, error: asPolarError(err) }),
  );
}

/**
 * The SSE response for a streamed call; throws (for an error status) if the engine fails early,
 * and reports a failure after the 200 went out to `onLateError`.
 */
export async function streamedResponse(
  result: Promise<PivotResponse>,
  dialect: Dialect,
  request: PivotRequest,
  timing: StreamTiming,
  onLateError: (error: PolarError) => void = () => {},
): Promise<Response> {
  const settled = settle(result);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const early = await Promise.race([settled, new Promise<null>((r) => (timer = setTimeout(() => r(null), timing.headStartMs)))]);
  clearTimeout(timer);
  if (early && !early.ok) throw early.error;
  if (early) return new Response(dialect.renderStream(early.response, request).join(""), { headers: SSE_HEADERS });

  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const write = (frames: SseFrame[]) => {
        try {
          controller.enqueue(encoder.encode(frames.join("")));
        } catch {
          // The client went away; the call is recorded regardless.
        }
      };
      write([": waiting for the engine\n\n"]);
      const keepAlive = setInterval(() => write([": keep-alive\n\n"]), timing.keepAliveMs);
      const outcome = await settled;
      clearInterval(keepAlive);
      if (!outcome.ok) onLateError(outcome.error);
      write(outcome.ok ? dialect.renderStream(outcome.response, request) : dialect.renderStreamError(outcome.error));
      try {
        controller.close();
      } catch {
        // Already cancelled by the client.
      }
    },
  });
  return new Response(body, { headers: SSE_HEADERS });
}
