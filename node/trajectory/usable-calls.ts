// Why: only calls with exact token ids can be rebuilt token-faithfully; text-only and failed
// calls are set aside (and reported) once, so strategies see a clean, ordered list.
import type { RecordedCall } from "../../protocol/calls.ts";
import type { ChatResponse } from "../../protocol/chat.ts";
import type { SkippedCall } from "../../protocol/trace.ts";

/** A recorded call that carries exact prompt and output token ids and a response. */
export type TokenCall = RecordedCall & { prompt_ids: number[]; output_ids: number[]; response: ChatResponse };

export function partitionCalls(calls: readonly RecordedCall[]): { usable: TokenCall[]; skipped: SkippedCall[] } {
  const usable: TokenCall[] = [];
  const skipped: SkippedCall[] = [];
  for (const call of [...calls].sort((a, b) => a.seq - b.seq)) {
    if (call.error !== null || call.response === null) skipped.push({ seq: call.seq, reason: "failed" });
    else if (call.prompt_ids === null || call.output_ids === null) skipped.push({ seq: call.seq, reason: "text-only" });
    else usable.push(call as TokenCall);
  }
  return { usable, skipped };
}
