// Why: the one entry point (session trajectory API, pipeline, bench): pick a strategy by name,
// rebuild a session's recorded calls into traces, and report how faithful the result is.
import type { RecordedCall } from "../../protocol/calls.ts";
import {
  NORMALISATION_KINDS,
  SPLIT_CAUSES,
  type NormalisationKind,
  type SessionTrajectoryStats,
  type SplitCounts,
  type Strategy,
  type Trace,
  type TraceSplit,
  type TrajectoryResult,
} from "../../protocol/trace.ts";
import type { AlignmentContext } from "./alignment.ts";
import { mergeCalls } from "./merge.ts";
import { DEFAULT_VOLATILE_PATTERNS, textNormalisers } from "./normalisers.ts";
import { perCallTraces } from "./per-call.ts";
import { retokenizeTrace } from "./retokenize.ts";
import { CHATML, singleTokenId, type TrajectoryTokenizer } from "./tokenizer-port.ts";
import { zeroNormalisations, type TraceBuilder } from "./trace-builder.ts";
import { partitionCalls, type TokenCall } from "./usable-calls.ts";

export interface RebuildOptions {
  tokenizer: TrajectoryTokenizer;
  /** Text that changes from turn to turn without changing the conversation (template-aware). */
  volatilePatterns?: readonly (RegExp | string)[];
  /** Open traces a merge strategy compares each call with (default 16). */
  maxOpenTraces?: number;
  /**
   * template-aware: start a new trace instead of merging a call whose context drift would exceed
   * this many tokens (0: merge only exact contexts, as prefix-merge does). Default: no limit.
   */
  maxContextDrift?: number;
}

const DEFAULT_MAX_OPEN_TRACES = 16;

function buildTraces(calls: readonly TokenCall[], strategy: Strategy, options: RebuildOptions): { builders: TraceBuilder[]; splits: TraceSplit[] } {
  const volatilePatterns = options.volatilePatterns ?? DEFAULT_VOLATILE_PATTERNS;
  switch (strategy) {
    case "per-call":
      return { builders: perCallTraces(calls), splits: [] };
    case "retokenize":
      return { builders: retokenizeTrace(calls, options.tokenizer, volatilePatterns), splits: [] };
    case "prefix-merge":
      return mergeWith(calls, strategy, new Set(), options, volatilePatterns);
    case "template-aware":
      return mergeWith(calls, strategy, new Set(NORMALISATION_KINDS), options, volatilePatterns);
    default:
      return unknownStrategy(strategy);
  }
}

/** A strategy added to STRATEGIES without a case above fails to compile here. */
function unknownStrategy(strategy: never): never {
  throw new Error(`no trace builder for strategy ${String(strategy)}`);
}

function mergeWith(
  calls: readonly TokenCall[],
  strategy: "prefix-merge" | "template-aware",
  allowed: ReadonlySet<NormalisationKind>,
  options: RebuildOptions,
  volatilePatterns: readonly (RegExp | string)[],
): { builders: TraceBuilder[]; splits: TraceSplit[] } {
  const { tokenizer } = options;
  const ctx: AlignmentContext = {
    decode: (ids) => tokenizer.decode(ids),
    messageStartId: singleTokenId(tokenizer, CHATML.messageStart),
    messageEndId: singleTokenId(tokenizer, CHATML.messageEnd),
    normalisers: textNormalisers(volatilePatterns),
  };
  return mergeCalls(
    calls,
    {
      strategy,
      allowed,
      maxOpenTraces: options.maxOpenTraces ?? DEFAULT_MAX_OPEN_TRACES,
      maxContextDrift: options.maxContextDrift ?? Number.POSITIVE_INFINITY,
    },
    ctx,
  );
}

/** Rebuild one session's recorded calls (any order; sorted by seq) with the named strategy. */
export function rebuild(calls: readonly RecordedCall[], strategy: Strategy, options: RebuildOptions): TrajectoryResult {
  const started = performance.now();
  const { usable, skipped } = partitionCalls(calls);
  const { builders, splits } = buildTraces(usable, strategy, options);
  const traces = builders.map((b) => b.build());
  return {
    traces,
    stats: sessionStats(strategy, calls.length, usable.length, skipped, traces, splits, performance.now() - started),
  };
}

function sessionStats(
  strategy: Strategy,
  callCount: number,
  used: number,
  skipped: SessionTrajectoryStats["skipped"],
  traces: readonly Trace[],
  splits: TraceSplit[],
  rebuildMs: number,
): SessionTrajectoryStats {
  const splitCounts = Object.fromEntries(SPLIT_CAUSES.map((c) => [c, 0])) as SplitCounts;
  for (const split of splits) splitCounts[split.cause]++;
  const normalisations = zeroNormalisations();
  let totalTokens = 0;
  let trainable = 0;
  let exact = 0;
  let withLogprob = 0;
  let contextExact = 0;
  let contextDrift = 0;
  for (const trace of traces) {
    totalTokens += trace.prompt_ids.length + trace.response_ids.length;
    trainable += trace.stats.trainable_tokens;
    exact += trace.stats.trainable_exactly_sampled;
    contextExact += trace.stats.context_exact_calls;
    contextDrift += trace.stats.context_drift_tokens;
    withLogprob += trace.logprobs.filter((lp, i) => lp !== null && trace.loss_mask[i] === 1).length;
    for (const kind of NORMALISATION_KINDS) normalisations[kind] += trace.stats.normalisations[kind];
  }
  return {
    strategy,
    call_count: callCount,
    calls_used: used,
    skipped,
    trace_count: traces.length,
    splits,
    split_counts: splitCounts,
    normalisations,
    total_tokens: totalTokens,
    trainable_tokens: trainable,
    trainable_exactly_sampled: exact,
    logprob_coverage: trainable === 0 ? 1 : withLogprob / trainable,
    context_exact_calls: contextExact,
    context_drift_tokens: contextDrift,
    rebuild_ms: rebuildMs,
  };
}
