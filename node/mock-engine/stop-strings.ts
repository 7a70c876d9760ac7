// Why: requests may carry `stop` strings; vLLM and SGLang end generation at the first sampled
// token whose decoded text completes one, keep that token among the sampled ids, cut the text
// before the string (unless asked to keep it) and report which string matched.
//
// vLLM (vllm/v1/engine/detokenizer.py `check_stop_strings`): after each token the detokenized
// text is searched, in stop-list order, from `1 - new_chars - len(stop)` characters before its end
// (only where a new match can be); the first hit wins; the text is cut at the match, or after it
// with `include_stop_str_in_output`. SGLang (managers/schedule_batch.py FINISH_MATCHED_STR,
// detokenizer `trim_matched_stop`) behaves the same for our purposes, `no_stop_trim` keeping it.
import type { BpeTokenizer } from "../tokenizer/bpe.ts";
import { EngineError } from "./engine-error.ts";

export interface StopMatch {
  /** Sampled ids up to and including the token that completed the stop string. */
  tokenCount: number;
  /** The output text after trimming. */
  text: string;
  stop: string;
}

export function findStopString(tokenizer: BpeTokenizer, ids: readonly number[], stops: readonly string[], keepStop: boolean): StopMatch | undefined {
  if (stops.length === 0) return undefined;
  let seen = 0;
  for (let i = 0; i < ids.length; i++) {
    // Incomplete UTF-8 at the end is held back, as the detokenizers do.
    const text = tokenizer.decode(ids.slice(0, i + 1), { skipSpecialTokens: true }).replace(/\uFFFD+$/, "");
    const newChars = text.length - seen;
    if (newChars <= 0) continue;
    seen = text.length;
    for (const stop of stops) {
      const at = text.indexOf(stop, Math.max(0, text.length + 1 - newChars - stop.length));
      if (at === -1) continue;
      return { tokenCount: i + 1, text: keepStop ? text.slice(0, at + stop.length) : text.slice(0, at), stop };
    }
  }
  return undefined;
}

/** `stop` as both engines accept it: one string or a list (an empty string is refused, as vLLM does). */
export function stopList(stop: string | readonly string[] | null | undefined): string[] {
  if (stop === null || stop === undefined) return [];
  const list = typeof stop === "string" ? [stop] : [...stop];
  if (list.includes("")) throw new EngineError("bad_request", "stop cannot contain an empty string.", "stop");
  return list;
}
