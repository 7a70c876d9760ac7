// Why: pytest reports test ids (`path::name[param]`) in its `-rA` short summary
// (`PASSED id`, `FAILED id - reason`) and in `-v` lines (`id PASSED [ 50%]`); SWE-bench names
// tests by these ids, so both forms are read.
import { record, type ReportedOutcome, type TestReport } from "./types.ts";

const STATUS: Record<string, ReportedOutcome> = {
  PASSED: "passed",
  XFAIL: "passed",
  FAILED: "failed",
  XPASS: "failed",
  ERROR: "error",
  SKIPPED: "skipped",
};
const STATUS_WORDS = Object.keys(STATUS).join("|");
const SUMMARY_LINE = new RegExp(`^(${STATUS_WORDS}) (\\S+::\\S+?(?:\\[.*?\\])?)(?: - .*)?$`);
const VERBOSE_LINE = new RegExp(`^(\\S+::\\S+?(?:\\[.*?\\])?) (${STATUS_WORDS})(?: \\(.*\\))?(?:\\s+\\[\\s*\\d+%\\])?$`);

export function parsePytest(output: string): TestReport {
  const report: TestReport = new Map();
  for (const raw of output.split("\n")) {
    const line = raw.trimEnd();
    const summary = SUMMARY_LINE.exec(line);
    if (summary) {
      record(report, summary[2]!, STATUS[summary[1]!]!);
      continue;
    }
    const verbose = VERBOSE_LINE.exec(line);
    if (verbose) record(report, verbose[1]!, STATUS[verbose[2]!]!);
  }
  return report;
}
