// Why: what every route handler needs — the model, the options and the fault gate — in one
// value built by the server factory (no module-level state).
import type { CallGate } from "./faults.ts";
import type { MockModel } from "./model.ts";
import type { MockEngineOptions } from "./options.ts";

export interface EngineContext {
  options: MockEngineOptions;
  model: MockModel;
  gate: CallGate;
}

export function randomHex(bytes = 16): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** An SSE response from an async producer of `data:` payloads; stops when the client leaves. */
export function sseResponse(signal: AbortSignal, produce: (send: (data: string) => void) => Promise<void>): Response {
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (data: string) => {
        if (!signal.aborted) controller.enqueue(encoder.encode(`data: ${data}\n\n`));
      };
      try {
        await produce(send);
      } catch (err) {
        send(JSON.stringify({ error: { message: err instanceof Error ? err.message : String(err), type: "InternalServerError", param: null, code: 500 } }));
      }
      if (!signal.aborted) controller.close();
    },
  });
  return new Response(stream, { headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" } });
}
