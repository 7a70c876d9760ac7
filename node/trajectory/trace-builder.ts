// Why: every strategy emits traces of one shape; this builder owns the conventions (sampled
// tokens: mask 1 with the engine's logprob; inserted context: mask 0 with a null logprob) and the
// per-trace faithfulness stats — how many trainable tokens are exactly sampled, and how far the
// context before each call's sampled span is from the prompt the engine saw — so strategies only
// decide which tokens go where.
import type { FinishReason } from "../../protocol/chat.ts";
import { NORMALISATION_KINDS, type NormalisationCounts, type NormalisationKind, type Strategy, type Trace } from "../../protocol/trace.ts";
import type { TokenCall } from "./usable-calls.ts";

export function zeroNormalisations(): NormalisationCounts {
  return Object.fromEntries(NORMALISATION_KINDS.map((k) => [k, 0])) as NormalisationCounts;
}

export class TraceBuilder {
  private readonly responseIds: number[] = [];
  private readonly lossMask: (0 | 1)[] = [];
  private readonly logprobs: (number | null)[] = [];
  private readonly callSeqs: number[] = [];
  private readonly policyVersions: number[] = [];
  private readonly callContextDrift: number[] = [];
  private readonly normalisations = zeroNormalisations();
  private finishReason: FinishReason | null = null;
  private trainable = 0;
  private exactlySampled = 0;
  private withLogprob = 0;

  constructor(
    private readonly strategy: Strategy,
    private readonly promptIds: readonly number[],
  ) {}

  /** Context the engine showed the model (tool results, template glue, later turns). */
  appendContext(ids: readonly number[]): void {
    for (const id of ids) {
      this.responseIds.push(id);
      this.lossMask.push(0);
      this.logprobs.push(null);
    }
  }

  /** The call's sampled output, id for id, with its logprobs. */
  appendSampled(call: TokenCall): void {
    call.output_ids.forEach((id, i) => this.appendTrainable(id, call.logprobs?.[i] ?? null, true));
  }

  /**
   * One trainable token; `sampledId` says whether it is the id the engine sampled there. It counts
   * as exactly sampled only when it also carries the engine's logprob for that place.
   */
  appendTrainable(id: number, logprob: number | null, sampledId: boolean): void {
    this.responseIds.push(id);
    this.lossMask.push(1);
    this.logprobs.push(logprob);
    this.trainable++;
    if (sampledId && logprob !== null) this.exactlySampled++;
    if (logprob !== null) this.withLogprob++;
  }

  /**
   * `call`'s sampled span starts here: records the call and how far the trace's tokens so far are
   * from the prompt the engine saw for it.
   */
  beginCall(call: TokenCall): void {
    this.callSeqs.push(call.seq);
    this.policyVersions.push(call.policy_version);
    this.callContextDrift.push(this.contextDrift([], call.prompt_ids));
    this.finishReason = call.response.finish_reason;
  }

  /**
   * Context drift of a call with prompt `prompt` whose span would start after this trace's tokens
   * followed by `context`: the tokens of both past their longest common prefix.
   */
  contextDrift(context: readonly number[], prompt: readonly number[]): number {
    const parts = [this.promptIds, this.responseIds, context];
    const length = parts.reduce((n, p) => n + p.length, 0);
    let common = 0;
    outer: for (const part of parts) {
      for (const id of part) {
        if (common >= prompt.length || prompt[common] !== id) break outer;
        common++;
      }
    }
    return length - common + (prompt.length - common);
  }

  countNormalisations(kinds: readonly NormalisationKind[]): void {
    for (const kind of kinds) this.normalisations[kind]++;
  }

  build(): Trace {
    return {
      prompt_ids: [...this.promptIds],
      response_ids: this.responseIds,
      loss_mask: this.lossMask,
      logprobs: this.logprobs,
      calls: this.callSeqs,
      policy_versions: this.policyVersions,
      call_context_drift: this.callContextDrift,
      finish_reason: this.finishReason,
      strategy: this.strategy,
      stats: {
        trainable_tokens: this.trainable,
        trainable_exactly_sampled: this.exactlySampled,
        logprob_coverage: this.trainable === 0 ? 1 : this.withLogprob / this.trainable,
        normalisations: { ...this.normalisations },
        context_exact_calls: this.callContextDrift.filter((d) => d === 0).length,
        context_drift_tokens: this.callContextDrift.reduce((n, d) => n + d, 0),
      },
    };
  }
}
