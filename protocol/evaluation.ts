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
 * apply, a command's verdict, the harness's exit, no reward — or `invalid`: the evaluation could
 * not judge the agent (see `evaluation_error`), so there is no reward and the result is masked.
 */
export const EVALUATION_STATUSES = ["resolved", "unresolved", "patch_failed", "passed", "failed", "no_reward", "invalid"] as const;
export const EvaluationStatus = z.enum(EVALUATION_STATUSES);
export type EvaluationStatus = z.infer<typeof EvaluationStatus>;

/**
 * Why an evaluation is invalid (SWE-bench's grading rules): the runner or interpreter is missing,
 * the log holds no test results and no sign the suite ran, the run exited non-zero while its log
 * reports no failure, a collection error outside the task's own tests kept its tests from
 * running, the tests or command ran over their timeout, the task's test patch does not apply, or
 * a requirement the task states (or its evaluator implies) is missing from the sandbox.
 */
export const EVALUATION_ERRORS = [
  "test_runner_missing",
  "no_test_results",
  "exit_without_failure",
  "collection_error",
  "evaluator_timeout",
  "test_patch_failed",
  "requirement_missing",
] as const;
export const EvaluationError = z.enum(EVALUATION_ERRORS);
export type EvaluationError = z.infer<typeof EvaluationError>;

/**
 * What a task's evaluation needs in its sandbox: a program on the evaluation PATH (`node`,
 * `python3`, `git`) or a module a Python interpreter must import (`python3:pytest`).
 */
export const EvaluationRequirement = z
  .string()
  .regex(/^[A-Za-z0-9_.+/-]+(:[A-Za-z_][A-Za-z0-9_.]*)?$/, "a program (node) or interpreter:module (python3:pytest)");
export type EvaluationRequirement = z.infer<typeof EvaluationRequirement>;

/** A bounded piece of text: what was kept and how many bytes were left out. */
export const BoundedText = z.object({ text: z.string(), dropped_bytes: z.number().int().min(0) });
export type BoundedText = z.infer<typeof BoundedText>;

export const EvaluationDetail = z.object({
  strategy: EvaluatorStrategy,
  status: EvaluationStatus,
  /** Set exactly when status is `invalid`. */
  evaluation_error: EvaluationError.nullable().default(null),
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
