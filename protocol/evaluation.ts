// Why: what an evaluation stores and reports next to a reward — per-test outcomes, the patch that
// was judged and bounded logs — defined once so the node's store, the coordinator and trainers
// read the same shape.
import { z } from "zod";

export const EVALUATOR_STRATEGIES = ["swe", "command", "session_completed", "none"] as const;
export const EvaluatorStrategy = z.enum(EVALUATOR_STRATEGIES);
export type EvaluatorStrategy = z.infer<typeof EvaluatorStrategy>;

/** Polar's names for the same evaluators. */
export const EVALUATOR_ALIASES: Record<string, EvaluatorStrategy> = {
  swebench_harness: "swe",
  test_on_output: "command",
};

export const TEST_PARSERS = ["pytest", "unittest", "tap"] as const;
export const TestParserName = z.enum(TEST_PARSERS);
export type TestParserName = z.infer<typeof TestParserName>;

export const TEST_OUTCOMES = ["passed", "failed", "error", "skipped", "missing"] as const;
export const TestOutcome = z.enum(TEST_OUTCOMES);
export type TestOutcome = z.infer<typeof TestOutcome>;

export const TestResult = z.object({
  name: z.string(),
  outcome: TestOutcome,
  /** Which list of the task names it (tests outside both are reported but not scored). */
  expected: z.enum(["FAIL_TO_PASS", "PASS_TO_PASS"]).nullable(),
});
export type TestResult = z.infer<typeof TestResult>;

/**
 * Why an evaluation gave its reward: resolved / unresolved by the tests, a patch that did not
 * apply, a test patch that did not apply, a command's verdict, the harness's exit, or no reward.
 */
export const EVALUATION_STATUSES = [
  "resolved",
  "unresolved",
  "patch_failed",
  "test_patch_failed",
  "tests_timed_out",
  "passed",
  "failed",
  "no_reward",
] as const;
export const EvaluationStatus = z.enum(EVALUATION_STATUSES);
export type EvaluationStatus = z.infer<typeof EvaluationStatus>;

/** A bounded piece of text: what was kept and how many bytes were left out. */
export const BoundedText = z.object({ text: z.string(), dropped_bytes: z.number().int().min(0) });
export type BoundedText = z.infer<typeof BoundedText>;

export const EvaluationDetail = z.object({
  strategy: EvaluatorStrategy,
  status: EvaluationStatus,
  reason: z.string().nullable(),
  /** The agent's change as judged (swe), bounded. */
  patch: BoundedText.nullable(),
  patch_files: z.array(z.string()),
  tests: z.array(TestResult),
  fail_to_pass: z.object({ passed: z.number().int(), total: z.number().int() }).nullable(),
  pass_to_pass: z.object({ passed: z.number().int(), total: z.number().int() }).nullable(),
  /** Output of the steps that ran (apply, tests, command), each bounded. */
  logs: z.record(z.string(), BoundedText),
  exit_code: z.number().int().nullable(),
  /** The sandbox the evaluation ran in (a fresh one for swe), null when none was needed. */
  sandbox_id: z.string().nullable(),
  duration_ms: z.number().min(0),
});
export type EvaluationDetail = z.infer<typeof EvaluationDetail>;

export const EvaluationResult = z.object({ reward: z.number().nullable(), detail: EvaluationDetail });
export type EvaluationResult = z.infer<typeof EvaluationResult>;
