// Why: prefix-merge and template-aware differ only in which asymmetries may be normalised when a
// new prompt is matched against the open traces; this module is the shared merge loop: longest
// matching tail wins, the prompt's new tokens become masked context, the sampled ids are the
// trainable tokens, and a call that matches nothing starts a new trace with a classified cause.
import { NORMALISATION_KINDS, type NormalisationKind, type SplitCause, type Strategy, type TraceSplit } from "../../protocol/trace.ts";
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
  /** A trace whose context would drift more than this from the call's prompt does not take it. */
  maxContextDrift: number;
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
    const attempts: Attempt[] = open.map((trace) => {
      const alignment = alignTail(trace.tail, prompt, settings.allowed, ctx);
      const tooMuchDrift = alignment.matched && driftExceeds(trace.builder, call.prompt_ids, alignment.promptEnd, settings.maxContextDrift);
      return { trace, alignment, tooMuchDrift };
    });
    let best: { trace: OpenTrace; promptEnd: number; normalisations: NormalisationKind[] } | undefined;
    for (const { trace, alignment, tooMuchDrift } of attempts) {
      if (alignment.matched && !tooMuchDrift && (!best || trace.tail.tokens.length > best.trace.tail.tokens.length)) {
        best = { trace, promptEnd: alignment.promptEnd, normalisations: alignment.normalisations };
      }
    }

    if (best) {
      const { trace } = best;
      trace.builder.appendContext(call.prompt_ids.slice(best.promptEnd));
      trace.builder.beginCall(call);
      trace.builder.appendSampled(call);
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
    builder.beginCall(call);
    builder.appendSampled(call);
    builders.push(builder);
    open.push({ index: builders.length - 1, builder, tail: tailOf(prompt, call), lastSeq: call.seq });
    if (open.length > settings.maxOpenTraces) {
      open = open.sort((a, b) => b.lastSeq - a.lastSeq).slice(0, settings.maxOpenTraces);
    }
  }
  return { builders, splits };
}

interface Attempt {
  trace: OpenTrace;
  alignment: Alignment;
  /** It aligned, but merging would exceed the context-drift limit. */
  tooMuchDrift: boolean;
}

function driftExceeds(builder: TraceBuilder, promptIds: readonly number[], promptEnd: number, limit: number): boolean {
  return Number.isFinite(limit) && builder.contextDrift(promptIds.slice(promptEnd), promptIds) > limit;
}

/**
 * Why `seq` matched no open trace. The candidate is the trace that aligns furthest when every
 * declared asymmetry is allowed (most recently extended on ties). If it then aligns fully, the
 * split was caused by an asymmetry this strategy does not normalise (the first one met) or, when it
 * aligned under this strategy's own rules, by the drift limit (named after the first asymmetry it
 * normalised, else "context-drift"); the candidate is superseded by the new trace.
 */
function classifySplit(
  seq: number,
  prompt: HashedTokens,
  attempts: readonly Attempt[],
  settings: MergeSettings,
  ctx: AlignmentContext,
): { split: TraceSplit; superseded: OpenTrace | undefined } {
  let best: { trace: OpenTrace; reach: number; cause: SplitCause } | undefined;
  for (const { trace, alignment, tooMuchDrift } of attempts) {
    const full = settings.allowed.size === ALL_KINDS.size ? alignment : alignTail(trace.tail, prompt, ALL_KINDS, ctx);
    const reach = full.matched ? Number.POSITIVE_INFINITY : full.reached;
    const driftCause: SplitCause = (alignment.matched && alignment.normalisations[0]) || "context-drift";
    const cause: SplitCause = full.matched
      ? (full.normalisations.find((k) => !settings.allowed.has(k)) ?? (tooMuchDrift ? driftCause : "unknown"))
      : full.cause;
    if (!best || reach > best.reach || (reach === best.reach && trace.lastSeq > best.trace.lastSeq)) {
      best = { trace, reach, cause };
    }
  }
  return {
    split: { seq, cause: best?.cause ?? "unknown", compared_with: best?.trace.index ?? null },
    superseded: best?.reach === Number.POSITIVE_INFINITY ? best.trace : undefined,
  };
}
