// Why: every evaluator reports the same EvaluationDetail; what an evaluator did not fill in (no
// patch, no tests, no sandbox) is empty or null, written once here.
import type { EvaluationDetail, EvaluatorStrategy } from "../../protocol/evaluation.ts";

export function evaluationDetail(strategy: EvaluatorStrategy, partial: Partial<EvaluationDetail> & Pick<EvaluationDetail, "status">): EvaluationDetail {
  return {
    strategy,
    evaluation_error: null,
    reason: null,
    patch: null,
    patch_files: [],
    tests: [],
    fail_to_pass: null,
    pass_to_pass: null,
    logs: {},
    exit_code: null,
    sandbox_id: null,
    duration_ms: 0,
    ...partial,
  };
}
