// Why: every test-output parser answers the same question — which test ended how — so the SWE
// evaluator scores pytest, unittest and node:test runs with one rule.
import type { TestOutcome } from "../../../protocol/evaluation.ts";

/** Outcomes a run reports ("missing" is decided by the evaluator: a named test not reported). */
export type ReportedOutcome = Exclude<TestOutcome, "missing">;

/** Test name → outcome; a name reported twice keeps its worst outcome. */
export type TestReport = Map<string, ReportedOutcome>;

const SEVERITY: Record<ReportedOutcome, number> = { passed: 0, skipped: 1, failed: 2, error: 3 };

export function record(report: TestReport, name: string, outcome: ReportedOutcome): void {
  const before = report.get(name);
  if (before === undefined || SEVERITY[outcome] > SEVERITY[before]) report.set(name, outcome);
}
