// Why: every strategy emits traces of one shape; this builder owns the conventions (sampled
// tokens: mask 1 with the engine's logprob; inserted context: mask 0 with a null logprob) and the
// per-trace faithfulness stats, so strategies only decide which tokens go where.
import type { FinishReason } from "../../protocol/chat.ts";
import {
  NORMALISATION_KINDS,
  type NormalisationCounts,
  type NormalisationKind,
  type Strategy,
  type Trace,
} from "../../protocol/trace.ts";
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

  /** One trainable token; `exact` says whether it is the id the engine sampled there. */
  appendTrainable(id: number, logprob: number | null, exact: boolean): void {
    this.responseIds.push(id);
    this.lossMask.push(1);
    this.logprobs.push(logprob);
    this.trainable++;
    if (exact) this.exactlySampled++;
    if (logprob !== null) this.withLogprob++;
  }

  /** Record that `call` contributed to this trace (its sampled tokens or its conversation). */
  addCall(call: TokenCall): void {
    this.callSeqs.push(call.seq);
    this.policyVersions.push(call.policy_version);
    this.finishReason = call.response.finish_reason;
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
      finish_reason: this.finishReason,
      strategy: this.strategy,
      stats: {
        trainable_tokens: this.trainable,
        trainable_exactly_sampled: this.exactlySampled,
        logprob_coverage: this.trainable === 0 ? 1 : this.withLogprob / this.trainable,
        normalisations: { ...this.normalisations },
      },
    };
  }
}
