// Why: prefix-merge and template-aware differ only in which asymmetries may be normalised when a
// new prompt is matched against the open traces; this module is the shared merge loop: longest
// matching tail wins, the prompt's new tokens become masked context, the sampled ids are the
// trainable tokens, and a call that matches nothing starts a new trace with a classified cause.
import {
  NORMALISATION_KINDS,
  type NormalisationKind,
  type SplitCause,
  type Strategy,
  type TraceSplit,
} from "../../protocol/trace.ts";
import { alignTail, type Alignment, type AlignmentContext, type TraceTail } from "./alignment.ts";
import { HashedTokens } from "./token-hash.ts";
import { TraceBuilder } from "./trace-builder.ts";
import type { TokenCall } from "./usable-calls.ts";

const ALL_KINDS: ReadonlySet<NormalisationKind> = new Set(NORMALISATION_KINDS);

interface OpenTrace {
  index: number;
  builder: TraceBuilder;
  tail: TraceTail;
  /** Seq of the call that last extended it (least recently extended is evicted first). */
  lastSeq: number;
}

export interface MergeSettings {
  strategy: Strategy;
  /** Asymmetries that do not break a trace (empty: strict token prefix). */
  allowed: ReadonlySet<NormalisationKind>;
  /** Open traces compared with each call; beyond this the least recently extended is closed. */
  maxOpenTraces: number;
}

export interface MergeOutcome {
  builders: TraceBuilder[];
  splits: TraceSplit[];
}

function tailOf(prompt: HashedTokens, call: TokenCall): TraceTail {
  return { tokens: HashedTokens.extend(prompt, call.output_ids), sampledFrom: prompt.length };
}

export function mergeCalls(calls: readonly TokenCall[], settings: MergeSettings, ctx: AlignmentContext): MergeOutcome {
  const builders: TraceBuilder[] = [];
  const splits: TraceSplit[] = [];
  let open: OpenTrace[] = [];

  for (const call of calls) {
    const prompt = HashedTokens.of(call.prompt_ids);
    const attempts = open.map((trace) => ({ trace, alignment: alignTail(trace.tail, prompt, settings.allowed, ctx) }));
    let best: { trace: OpenTrace; promptEnd: number; normalisations: NormalisationKind[] } | undefined;
    for (const { trace, alignment } of attempts) {
      if (alignment.matched && (!best || trace.tail.tokens.length > best.trace.tail.tokens.length)) {
        best = { trace, promptEnd: alignment.promptEnd, normalisations: alignment.normalisations };
      }
    }

    if (best) {
      const { trace } = best;
      trace.builder.appendContext(call.prompt_ids.slice(best.promptEnd));
      trace.builder.appendSampled(call);
      trace.builder.addCall(call);
      trace.builder.countNormalisations(best.normalisations);
      trace.tail = tailOf(prompt, call);
      trace.lastSeq = call.seq;
      continue;
    }

    if (open.length > 0) {
      const { split, superseded } = classifySplit(call.seq, prompt, attempts, settings, ctx);
      splits.push(split);
      // The same conversation goes on in the new trace: the old one will not match again.
      if (superseded) open = open.filter((t) => t !== superseded);
    }
    const builder = new TraceBuilder(settings.strategy, call.prompt_ids);
    builder.appendSampled(call);
    builder.addCall(call);
    builders.push(builder);
    open.push({ index: builders.length - 1, builder, tail: tailOf(prompt, call), lastSeq: call.seq });
    if (open.length > settings.maxOpenTraces) {
      open = open.sort((a, b) => b.lastSeq - a.lastSeq).slice(0, settings.maxOpenTraces);
    }
  }
  return { builders, splits };
}

/**
 * Why `seq` matched no open trace. The candidate is the trace that aligns furthest when every
 * declared asymmetry is allowed (most recently extended on ties). If it then aligns fully, the
 * split was caused by an asymmetry this strategy does not normalise (the first one met), and the
 * candidate is superseded by the new trace.
 */
function classifySplit(
  seq: number,
  prompt: HashedTokens,
  attempts: readonly { trace: OpenTrace; alignment: Alignment }[],
  settings: MergeSettings,
  ctx: AlignmentContext,
): { split: TraceSplit; superseded: OpenTrace | undefined } {
  let best: { trace: OpenTrace; reach: number; cause: SplitCause } | undefined;
  for (const { trace, alignment } of attempts) {
    const full = settings.allowed.size === ALL_KINDS.size ? alignment : alignTail(trace.tail, prompt, ALL_KINDS, ctx);
    const reach = full.matched ? Number.POSITIVE_INFINITY : full.reached;
    const cause: SplitCause = full.matched ? (full.normalisations.find((k) => !settings.allowed.has(k)) ?? "unknown") : full.cause;
    if (!best || reach > best.reach || (reach === best.reach && trace.lastSeq > best.trace.lastSeq)) {
      best = { trace, reach, cause };
    }
  }
  return {
    split: { seq, cause: best?.cause ?? "unknown", compared_with: best?.trace.index ?? null },
    superseded: best?.reach === Number.POSITIVE_INFINITY ? best.trace : undefined,
  };
}
