// Why: `python -m unittest -v` prints `test_name (module.Class.test_name) ... ok` (Python 3.11+;
// `(module.Class)` before), with a docstring's first line between name and verdict when there is
// one; tests are named `module.Class.test_name`, the id unittest itself accepts on its command line.
import { record, type ReportedOutcome, type TestReport } from "./types.ts";

const HEAD = /^(\w+) \(([\w.]+)\)/;
const VERDICT = / \.\.\. (ok|FAIL|ERROR|skipped.*|expected failure|unexpected success)$/;

function outcome(verdict: string): ReportedOutcome {
  if (verdict === "ok" || verdict === "expected failure") return "passed";
  if (verdict === "FAIL" || verdict === "unexpected success") return "failed";
  if (verdict === "ERROR") return "error";
  return "skipped";
}

function testId(method: string, where: string): string {
  return where.endsWith(`.${method}`) ? where : `${where}.${method}`;
}

export function parseUnittest(output: string): TestReport {
  const report: TestReport = new Map();
  let pending: string | undefined;
  for (const raw of output.split("\n")) {
    const line = raw.trimEnd();
    const head = HEAD.exec(line);
    const verdict = VERDICT.exec(line);
    // A module that failed to import is not a test (unittestCollectionErrors reports it).
    if (head) pending = head[2]!.startsWith("unittest.loader._FailedTest") ? undefined : testId(head[1]!, head[2]!);
    if (verdict && pending !== undefined) {
      record(report, pending, outcome(verdict[1]!));
      pending = undefined;
    } else if (!head) {
      // a docstring line may sit between the name and its verdict; anything else ends the wait
      if (!verdict && line.trim() === "") pending = undefined;
    }
  }
  return report;
}

/** `Ran 3 tests in 0.002s`: unittest's runner got as far as running (even zero tests). */
export function unittestRan(output: string): boolean {
  return /^Ran \d+ tests? in /m.test(output);
}

/** Modules unittest could not import (reported as `unittest.loader._FailedTest`). */
export function unittestCollectionErrors(output: string): string[] {
  const modules = new Set<string>();
  for (const match of output.matchAll(/^ImportError: Failed to import test module: (\S+)$/gm)) modules.add(match[1]!);
  return [...modules];
}
