// Why: engines answer with token-id arrays as long as the whole context (100k+ ids per call) and
// one logprob entry per sampled token; validating them element by element through zod costs more
// than the rest of the answer, so these schemas check them with one tight loop each and still
// reject anything of the wrong shape.
import { z } from "zod";
import type { TokenIdList } from "../../store/token-codec.ts";

/** A token id: an integer in [0, 2^32), what the store packs as uint32 (one comparison: any other value changes under `>>> 0`). */
function isTokenId(id: unknown): id is number {
  return (id as number) >>> 0 === id;
}

function isTokenIdArray(value: unknown): value is number[] {
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) if (!isTokenId(value[i])) return false;
  return true;
}

/** An array of token ids: integers in [0, 2^32). */
export const TokenIds = z.custom<number[]>(isTokenIdArray, { message: "expected an array of non-negative integer token ids (uint32)" });

/** An answer's prompt ids: an array of token ids, or the Uint32Array PromptIdsJson parses them into (uint32 by construction). */
export const PromptTokenIds = z.custom<TokenIdList>((value) => value instanceof Uint32Array || isTokenIdArray(value), {
  message: "expected an array of non-negative integer token ids (uint32)",
});

function isLogprobEntries(value: unknown): value is Array<{ logprob: number }> {
  if (!Array.isArray(value)) return false;
  for (const entry of value) if (typeof entry !== "object" || entry === null || typeof (entry as { logprob?: unknown }).logprob !== "number") return false;
  return true;
}

/** vLLM's `logprobs.content`: one `{logprob, …}` entry per sampled token (other fields unread). */
export const LogprobEntries = z.custom<Array<{ logprob: number }>>(isLogprobEntries, { message: "expected logprob entries {logprob: number}" });

/** One SGLang logprob tuple `[logprob, token_id, token_text|null]`. */
export type SglangTokenLogprob = [logprob: number, tokenId: number, text: string | null];

function isSglangTokenLogprobs(value: unknown): value is SglangTokenLogprob[] {
  if (!Array.isArray(value)) return false;
  for (const entry of value) {
    if (!Array.isArray(entry) || entry.length !== 3) return false;
    const [logprob, id, text] = entry as unknown[];
    if (typeof logprob !== "number" || !isTokenId(id)) return false;
    if (text !== null && typeof text !== "string") return false;
  }
  return true;
}

/**
 * SGLang's `meta_info.output_token_logprobs`: one `[logprob, token_id, token_text|null]` per
 * sampled token (TokenizerManager.detokenize_logprob_tokens; text only with return_text_in_logprobs).
 */
export const SglangTokenLogprobs = z.custom<SglangTokenLogprob[]>(isSglangTokenLogprobs, {
  message: "expected [logprob, token_id, token_text|null] tuples",
});
