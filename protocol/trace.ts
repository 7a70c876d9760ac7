// Why: a trace is what a trainer consumes (token ids, loss mask, sampled logprobs) and what the
// session trajectory API, the node's result report and the coordinator's trainer stream carry;
// its shape, the strategy names and the split/normalisation vocabularies are defined once here.
import { z } from "zod";
import { FinishReason } from "./chat.ts";

/** How a session's recorded calls become traces (see node/trajectory/). */
export const STRATEGIES = ["per-call", "prefix-merge", "template-aware", "retokenize"] as const;
export const Strategy = z.enum(STRATEGIES);
export type Strategy = z.infer<typeof Strategy>;

/** Why a merge strategy started a new trace instead of extending an open one. */
export const SPLIT_CAUSES = [
  /** History changed after the first message: compaction, edited or dropped messages. */
  "compaction",
  /** The first message (system prompt + tools) differs: another conversation in the session. */
  "sub-agent",
  /** Reasoning of an earlier assistant turn was dropped or re-rendered by the chat template. */
  "thinking-strip",
  /** Generation-prompt glue (Qwen3 thinking-off `<think>\n\n</think>\n\n`) absent from history. */
  "generation-glue",
  /** A configured volatile pattern (e.g. a per-turn billing header) changed. */
  "volatile-text",
  /** Tool-call JSON re-serialised by the template (spacing, key order, whitespace around it). */
  "tool-args-drift",
  /** Same text, different token ids (the re-rendered history re-tokenized differently). */
  "tokenization-drift",
  /** Merging would leave more than `max_context_drift` tokens of context unlike the call's prompt. */
  "context-drift",
  /** The new prompt ends inside the open trace, or the last sampled turn was edited. */
  "unknown",
] as const;
export const SplitCause = z.enum(SPLIT_CAUSES);
export type SplitCause = z.infer<typeof SplitCause>;

/** Declared asymmetries the template-aware strategy normalises (a subset of the split causes). */
export const NORMALISATION_KINDS = [
  "generation-glue",
  "thinking-strip",
  "volatile-text",
  "tool-args-drift",
  "tokenization-drift",
] as const satisfies readonly SplitCause[];
export const NormalisationKind = z.enum(NORMALISATION_KINDS);
export type NormalisationKind = z.infer<typeof NormalisationKind>;

/** Why a recorded call took no part in rebuilding. */
export const SKIP_REASONS = ["text-only", "failed"] as const;
export const SkipReason = z.enum(SKIP_REASONS);
export type SkipReason = z.infer<typeof SkipReason>;

const Counts = <K extends readonly [string, ...string[]]>(keys: K) => z.record(z.enum(keys), z.number().int().nonnegative());

export const NormalisationCounts = Counts(NORMALISATION_KINDS);
export type NormalisationCounts = z.infer<typeof NormalisationCounts>;
export const SplitCounts = Counts(SPLIT_CAUSES);
export type SplitCounts = z.infer<typeof SplitCounts>;

/** How faithful one trace is to what the engine actually sampled. */
export const TraceStats = z.object({
  /** Tokens with loss_mask 1. */
  trainable_tokens: z.number().int().nonnegative(),
  /** Trainable tokens whose id and logprob are both the ones the engine sampled at that place. */
  trainable_exactly_sampled: z.number().int().nonnegative(),
  /** Fraction of trainable tokens that carry the engine's logprob (1 when none are trainable). */
  logprob_coverage: z.number().min(0).max(1),
  /** Asymmetries normalised while merging calls into this trace. */
  normalisations: NormalisationCounts,
  /** Calls of the trace whose prompt ids equal the trace's tokens before their sampled span. */
  context_exact_calls: z.number().int().nonnegative(),
  /** Sum of `call_context_drift`: how much context the trace shows unlike what the engine saw. */
  context_drift_tokens: z.number().int().nonnegative(),
});
export type TraceStats = z.infer<typeof TraceStats>;

/**
 * One training sequence. `response_ids` is everything after the first call's prompt: sampled
 * segments (loss_mask 1, the engine's logprobs) and inserted context — tool results, template
 * glue, later user turns — (loss_mask 0, logprob null). A null logprob always means "not
 * sampled here"; it is never 0.
 */
export const Trace = z.object({
  prompt_ids: z.array(z.number().int()),
  response_ids: z.array(z.number().int()),
  loss_mask: z.array(z.union([z.literal(0), z.literal(1)])),
  logprobs: z.array(z.number().nullable()),
  /** Seq numbers of the calls merged into this trace, in order. */
  calls: z.array(z.number().int().nonnegative()),
  /** Policy version of each call in `calls`. */
  policy_versions: z.array(z.number().int()),
  /**
   * Per entry of `calls`: the trace's tokens before that call's sampled span past their longest
   * common prefix with the call's prompt ids, plus the prompt ids past it (0: the engine saw
   * exactly this context).
   */
  call_context_drift: z.array(z.number().int().nonnegative()),
  /** Finish reason of the trace's last call. */
  finish_reason: FinishReason.nullable(),
  strategy: Strategy,
  stats: TraceStats,
});
export type Trace = z.infer<typeof Trace>;

export const TraceSplit = z.object({
  /** The call that started a new trace. */
  seq: z.number().int().nonnegative(),
  cause: SplitCause,
  /** The open trace it was compared with (index into `traces`), null when none was open. */
  compared_with: z.number().int().nonnegative().nullable(),
});
export type TraceSplit = z.infer<typeof TraceSplit>;

export const SkippedCall = z.object({ seq: z.number().int().nonnegative(), reason: SkipReason });
export type SkippedCall = z.infer<typeof SkippedCall>;

/** What rebuilding one session produced, for ablations and the session trajectory API. */
export const SessionTrajectoryStats = z.object({
  strategy: Strategy,
  call_count: z.number().int().nonnegative(),
  calls_used: z.number().int().nonnegative(),
  skipped: z.array(SkippedCall),
  trace_count: z.number().int().nonnegative(),
  /** Empty for per-call and retokenize, which do not merge. */
  splits: z.array(TraceSplit),
  split_counts: SplitCounts,
  normalisations: NormalisationCounts,
  /** Prompt + response tokens over all traces: what the trainer must process. */
  total_tokens: z.number().int().nonnegative(),
  trainable_tokens: z.number().int().nonnegative(),
  trainable_exactly_sampled: z.number().int().nonnegative(),
  logprob_coverage: z.number().min(0).max(1),
  /** Sums of the traces' stats of the same names. */
  context_exact_calls: z.number().int().nonnegative(),
  context_drift_tokens: z.number().int().nonnegative(),
  rebuild_ms: z.number().nonnegative(),
});
export type SessionTrajectoryStats = z.infer<typeof SessionTrajectoryStats>;

/** Query of `GET /v1/sessions/:id/trajectory` (strings, as a URL carries them). */
export const TrajectoryQuery = z.object({
  /** A strategy name (checked against STRATEGIES by the service); default template-aware. */
  strategy: z.string().optional(),
  /** template-aware: most context-drift tokens a call may add to a trace, a non-negative integer (0: exact contexts only). */
  max_context_drift: z
    .string()
    .regex(/^\d{1,9}$/, "max_context_drift must be a non-negative integer")
    .transform(Number)
    .optional(),
});
export type TrajectoryQuery = z.infer<typeof TrajectoryQuery>;

export const TrajectoryResult = z.object({ traces: z.array(Trace), stats: SessionTrajectoryStats });
export type TrajectoryResult = z.infer<typeof TrajectoryResult>;
