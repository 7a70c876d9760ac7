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

/** pytest's session header, its `collected N items` line or its final `in 0.12s` summary. */
const RAN = /^(=+ test session starts =+|collected \d+ items?\b.*|=+ .* in [\d.]+s(?: \(.*\))? =+)$/m;

export function pytestRan(output: string): boolean {
  return RAN.test(output);
}

/** `ERROR tests/test_x.py - …` (a short-summary line without `::`) and `___ ERROR collecting tests/test_x.py ___`. */
const COLLECTION = [/^ERROR (\S+?)(?: - .*)?$/, /^_+ ERROR collecting (\S+) _+$/];

/** Files pytest could not collect (their module did not import, or a conftest failed). */
export function pytestCollectionErrors(output: string): string[] {
  const files = new Set<string>();
  for (const raw of output.split("\n")) {
    const line = raw.trimEnd();
    for (const pattern of COLLECTION) {
      const match = pattern.exec(line);
      if (match && !match[1]!.includes("::")) files.add(match[1]!);
    }
  }
  return [...files];
}
