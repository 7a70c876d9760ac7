// Why: the simplest faithful strategy — each call is its own trace (prompt, then its sampled
// output) — is the reference the merge strategies are measured against.
import { TraceBuilder } from "./trace-builder.ts";
import type { TokenCall } from "./usable-calls.ts";

export function perCallTraces(calls: readonly TokenCall[]): TraceBuilder[] {
  return calls.map((call) => {
    const builder = new TraceBuilder("per-call", call.prompt_ids);
    builder.beginCall(call);
    builder.appendSampled(call);
    return builder;
  });
}
