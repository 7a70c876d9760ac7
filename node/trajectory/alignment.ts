// Why: deciding whether a new prompt continues an open trace is the heart of every merge
// strategy. The trace's tail (the last prompt it absorbed plus that call's sampled output) is
// compared with the new prompt by hash, jumping from one divergence to the next; each divergence
// is cut to its chat message (between ChatML markers), decoded, and either explained by an
// allowed asymmetry (then both sides resume after the message) or it ends the match with a
// classified cause. Cost per call: O(log n) per divergence plus the divergent messages' length.
import type { NormalisationKind, SplitCause } from "../../protocol/trace.ts";
import { explainDivergence, type TextNormalisers } from "./normalisers.ts";
import type { HashedTokens } from "./token-hash.ts";

/** What alignment needs from the model's tokenizer and template. */
export interface AlignmentContext {
  decode(ids: readonly number[]): string;
  /** Token id of the message start marker (`<|im_start|>`). */
  messageStartId: number;
  /** Token id of the message end marker (`<|im_end|>`, also Qwen3's EOS). */
  messageEndId: number;
  normalisers: TextNormalisers;
}

/** An open trace's comparison base: the last prompt it absorbed followed by the sampled output. */
export interface TraceTail {
  tokens: HashedTokens;
  /** Where the last sampled output starts in `tokens`. */
  sampledFrom: number;
}

export type Alignment =
  | {
      matched: true;
      /** Position in the new prompt where the tail ends: the new context starts here. */
      promptEnd: number;
      /** One entry per normalised divergence kind, in order of position. */
      normalisations: NormalisationKind[];
    }
  | {
      matched: false;
      /** Tail tokens aligned before the unexplained divergence (to rank candidates). */
      reached: number;
      /** Structural cause at the first divergence no allowed asymmetry explains (classifyFailure). */
      cause: SplitCause;
    };

function indexOfFrom(ids: readonly number[], id: number, from: number): number {
  for (let i = from; i < ids.length; i++) if (ids[i] === id) return i;
  return -1;
}

function lastIndexAtOrBefore(ids: readonly number[], id: number, from: number): number {
  for (let i = from; i >= 0; i--) if (ids[i] === id) return i;
  return -1;
}

/** Align `tail` against `prompt`, explaining divergences only by the `allowed` asymmetries. */
export function alignTail(tail: TraceTail, prompt: HashedTokens, allowed: ReadonlySet<NormalisationKind>, ctx: AlignmentContext): Alignment {
  const s = tail.tokens;
  const normalisations: NormalisationKind[] = [];
  let j = 0; // position in the tail
  let shift = 0; // position in the prompt = j + shift
  for (;;) {
    j += s.commonRun(j, prompt, j + shift);
    if (j === s.length) return { matched: true, promptEnd: j + shift, normalisations };
    const k = j + shift;
    const failure = (): Alignment => ({
      matched: false,
      reached: j,
      cause: classifyFailure(tail, j, k === prompt.length, ctx.messageEndId),
    });
    if (k === prompt.length) return failure();
    const messageStart = Math.max(0, lastIndexAtOrBefore(s.ids, ctx.messageStartId, j));
    const tailEndMarker = indexOfFrom(s.ids, ctx.messageEndId, j);
    const promptEndMarker = indexOfFrom(prompt.ids, ctx.messageEndId, k);
    if (promptEndMarker < 0) return failure();
    // An output cut by max tokens has no end marker: its message ends where the tail ends, and
    // the prompt's rendering of it ends before the marker the template adds.
    const tailChunkEnd = tailEndMarker < 0 ? s.length : tailEndMarker + 1;
    const promptChunkEnd = tailEndMarker < 0 ? promptEndMarker : promptEndMarker + 1;
    const explained = explainDivergence(
      ctx.decode(s.ids.slice(messageStart, tailChunkEnd)),
      ctx.decode(prompt.ids.slice(messageStart + shift, promptChunkEnd)),
      ctx.normalisers,
      allowed,
    );
    if (!explained) return failure();
    normalisations.push(...explained);
    j = tailChunkEnd;
    shift = promptChunkEnd - tailChunkEnd;
  }
}

/**
 * Structural cause of an unexplained divergence at tail position `at`: inside the first
 * message (system prompt and tools) another conversation is speaking; inside the last sampled
 * output the harness edited or re-sent the turn; elsewhere history was rewritten.
 */
function classifyFailure(tail: TraceTail, at: number, promptEnded: boolean, messageEndId: number): SplitCause {
  if (promptEnded) return "unknown";
  const firstMessageEnd = tail.tokens.ids.indexOf(messageEndId);
  if (firstMessageEnd < 0 || at <= firstMessageEnd) return "sub-agent";
  return at >= tail.sampledFrom ? "unknown" : "compaction";
}
