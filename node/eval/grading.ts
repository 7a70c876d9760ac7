// Why: SWE-bench's grading rules, in one place for every evaluator. A test run is graded only
// when it shows the agent's code was really judged; otherwise the evaluation is invalid — no
// reward, a named cause — because a 0 from tests that never ran poisons training as surely as a
// wrong 1. The rules:
//   - the tests or command ran over their timeout                      → evaluator_timeout
//   - the runner or interpreter is missing (exit 126/127, `python3: No module named pytest`)
//                                                                       → test_runner_missing
//   - a file or module outside the task's own tests failed to collect, and the task's tests
//     went unreported                                                   → collection_error
//   - no test results and no sign the suite ran                         → no_test_results
//   - a non-zero exit while the log reports no failure (a patch can print its own PASSED lines)
//                                                                       → exit_without_failure
// A valid run scores like SWE-bench: every FAIL_TO_PASS test must pass and every PASS_TO_PASS
// test must still pass; a named test that is skipped, failed, errored or missing counts as failed.
import type { EvaluationError, TestParserName, TestResult } from "../../protocol/evaluation.ts";
import type { Task } from "../../protocol/task.ts";
import { patchFiles } from "./collect-patch.ts";
import { testOutputReader, type TestReport } from "./parsers/index.ts";

export interface TestRun {
  /** Null when the run was killed. */
  exit_code: number | null;
  timed_out: boolean;
  /** stdout and stderr, joined. */
  output: string;
  timeout_seconds: number;
}

export interface TestScore {
  tests: TestResult[];
  resolved: boolean;
  f2p: number;
  p2p: number;
}

export type Grade = ({ valid: true } | { valid: false; error: EvaluationError; reason: string }) & TestScore;

/** A Python interpreter's own message when `python3 -m MODULE` names a module it does not have. */
const PYTHON_MODULE_MISSING = /^\S*python[\d.]*: No module named (\S+)$/m;
/** The shell's "not found" / "not executable" exit codes. */
const RUNNER_EXIT_CODES = new Set([126, 127]);

/** The runner-missing line of an output, if any (exit 126/127 with nothing parsed, or python's -m message). */
export function runnerMissing(run: Pick<TestRun, "exit_code" | "output">, parsedAnything: boolean): string | null {
  if (parsedAnything) return null;
  const module = PYTHON_MODULE_MISSING.exec(run.output);
  if (module) return module[0];
  if (run.exit_code !== null && RUNNER_EXIT_CODES.has(run.exit_code)) {
    const line = run.output
      .split("\n")
      .map((l) => l.trim())
      .find((l) => /not found|No such file|Permission denied|cannot execute/i.test(l));
    return line ?? `the command exited with ${run.exit_code} (not found or not executable)`;
  }
  return null;
}

/** Outcome of every named test; tests the run did not report are "missing". */
export function scoreTests(task: Task, report: TestReport): TestScore {
  const tests: TestResult[] = [];
  const named = new Set<string>();
  let f2p = 0;
  let p2p = 0;
  for (const [list, names] of [
    ["FAIL_TO_PASS", task.FAIL_TO_PASS],
    ["PASS_TO_PASS", task.PASS_TO_PASS],
  ] as const) {
    for (const name of names) {
      named.add(name);
      const outcome = report.get(name) ?? "missing";
      tests.push({ name, outcome, expected: list });
      if (outcome === "passed") list === "FAIL_TO_PASS" ? f2p++ : p2p++;
    }
  }
  for (const [name, outcome] of report) if (!named.has(name)) tests.push({ name, outcome, expected: null });
  const resolved = f2p === task.FAIL_TO_PASS.length && p2p === task.PASS_TO_PASS.length;
  return { tests, resolved, f2p, p2p };
}

/**
 * Whether a collection error is in the task's own tests — a file (pytest) or module (unittest)
 * holding named tests, or a file the task's test patch adds or changes — and the named tests in it.
 */
function collectedLocation(location: string, parser: TestParserName, task: Task, testPatchFiles: Set<string>): { own: boolean; tests: string[] } {
  const named = [...task.FAIL_TO_PASS, ...task.PASS_TO_PASS];
  if (parser === "pytest") {
    const tests = named.filter((n) => n.startsWith(`${location}::`));
    return { own: tests.length > 0 || testPatchFiles.has(location), tests };
  }
  // unittest names a module by its dotted path when it discovered it, by its last part when loaded by name.
  const tests = named.filter((n) => n.startsWith(`${location}.`) || n.includes(`.${location}.`));
  const asFile = `${location.replaceAll(".", "/")}.py`;
  return { own: tests.length > 0 || [...testPatchFiles].some((f) => f === asFile || f.endsWith(`/${asFile}`)), tests };
}

export function gradeTestRun(task: Task, parser: TestParserName, run: TestRun): Grade {
  const reader = testOutputReader(parser);
  const report = reader.parse(run.output);
  const invalid = (error: EvaluationError, reason: string): Grade => ({ valid: false, error, reason, ...scoreTests(task, report) });
  if (run.timed_out) return invalid("evaluator_timeout", `the tests ran over their ${run.timeout_seconds} s timeout`);
  const missing = runnerMissing(run, report.size > 0);
  if (missing) return invalid("test_runner_missing", `the test runner could not start: ${missing}`);

  // Collection errors in the task's own test files are the agent's doing (its change broke an
  // import): those tests count as errors. Elsewhere they say the suite itself is broken.
  const testPatchFiles = new Set(patchFiles(task.test_patch ?? ""));
  const collection = reader.collectionErrors(run.output);
  const outside: string[] = [];
  for (const location of collection) {
    const { own, tests } = collectedLocation(location, parser, task, testPatchFiles);
    if (!own) outside.push(location);
    for (const name of tests) if (!report.has(name)) report.set(name, "error");
  }
  const named = [...task.FAIL_TO_PASS, ...task.PASS_TO_PASS];
  if (outside.length > 0 && named.some((n) => !report.has(n))) {
    return invalid("collection_error", `could not collect ${outside.join(", ")} (outside the task's tests), and the task's tests did not run`);
  }
  if (report.size === 0 && !reader.ran(run.output)) {
    return invalid("no_test_results", `no ${parser} test results in the output and no sign the test suite ran`);
  }
  const failureReported = collection.length > 0 || [...report.values()].some((o) => o === "failed" || o === "error");
  if (run.exit_code !== 0 && !failureReported) {
    return invalid("exit_without_failure", `the tests exited with ${run.exit_code ?? "a signal"} but the log reports no failing test`);
  }
  return { valid: true, ...scoreTests(task, report) };
}
