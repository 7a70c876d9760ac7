// Why: invalid evaluations are infrastructure failures an operator must see (a node without
// pytest, a suite that no longer collects); the node counts them by cause and serves the counts
// in its status, next to its stage metrics.
import { EVALUATION_ERRORS, EvaluationError } from "../../protocol/evaluation.ts";
import type { SessionResult } from "../../protocol/rollout.ts";

export type EvaluationErrorCounts = Record<EvaluationError, number>;

export class EvaluationStats {
  private readonly counts = Object.fromEntries(EVALUATION_ERRORS.map((e) => [e, 0])) as EvaluationErrorCounts;

  /** Counts a result whose evaluation was invalid (failure cause evaluation_invalid). */
  record(result: SessionResult): void {
    const failure = result.metadata.failure as { cause?: unknown } | undefined;
    if (failure?.cause !== "evaluation_invalid") return;
    const error = EvaluationError.safeParse((result.metadata.evaluation as { evaluation_error?: unknown } | undefined)?.evaluation_error);
    if (error.success) this.counts[error.data]++;
  }

  snapshot(): EvaluationErrorCounts {
    return { ...this.counts };
  }
}
