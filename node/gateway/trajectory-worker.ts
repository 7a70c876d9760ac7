// Why: rebuilding a long session is CPU work (≈0.3 s for 1,000 calls, plus ~1–2 s to load the
// tokenizer once); done on the gateway's thread it would stall every live LLM call and stream
// keep-alive. This worker does it off that thread; trajectory-service.ts is its only client.
import type { RecordedCall } from "../../protocol/calls.ts";
import { rebuild, type RebuildOptions, type Strategy, type TrajectoryTokenizer } from "../trajectory/index.ts";
import { trajectoryTokenizer } from "./model-tokenizer.ts";

export interface RebuildJob {
  id: number;
  calls: RecordedCall[];
  strategy: Strategy;
  /** Rebuild options a client may set (the tokenizer is the worker's own). */
  options: Pick<RebuildOptions, "maxContextDrift">;
  /** Model folder of the tokenizer and chat template; the bundled Qwen3 when absent. */
  tokenizerFolder?: string;
}

export type RebuildReply = { id: number; result: ReturnType<typeof rebuild> } | { id: number; error: string };

declare const self: Worker;
const tokenizers = new Map<string, TrajectoryTokenizer>();

self.onmessage = (event: MessageEvent<RebuildJob>) => {
  const { id, calls, strategy, options, tokenizerFolder } = event.data;
  try {
    const key = tokenizerFolder ?? "";
    let tokenizer = tokenizers.get(key);
    if (!tokenizer) {
      tokenizer = trajectoryTokenizer(tokenizerFolder);
      tokenizers.set(key, tokenizer);
    }
    self.postMessage({ id, result: rebuild(calls, strategy, { ...options, tokenizer }) } satisfies RebuildReply);
  } catch (err) {
    self.postMessage({ id, error: err instanceof Error ? err.message : String(err) } satisfies RebuildReply);
  }
};
