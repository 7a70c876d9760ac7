// Why: a task names its test parser (evaluator.config.parser); this maps the name to what the
// grading rules read from a run's output: the per-test report, whether the suite ran at all, and
// which test files or modules could not even be collected.
import type { TestParserName } from "../../../protocol/evaluation.ts";
import { parsePytest, pytestCollectionErrors, pytestRan } from "./pytest.ts";
import { parseTap, tapRan } from "./tap.ts";
import type { TestReport } from "./types.ts";
import { parseUnittest, unittestCollectionErrors, unittestRan } from "./unittest.ts";

export type { TestReport } from "./types.ts";

export interface TestOutputReader {
  parse(output: string): TestReport;
  /** Whether the output shows the suite ran (a session header, a summary), even with no test results. */
  ran(output: string): boolean;
  /**
   * Test files (pytest) or modules (unittest) that failed to load. node:test reports a file that
   * does not load as a failed test of its own and runs the other files, so TAP has none.
   */
  collectionErrors(output: string): string[];
}

const READERS: Record<TestParserName, TestOutputReader> = {
  pytest: { parse: parsePytest, ran: pytestRan, collectionErrors: pytestCollectionErrors },
  unittest: { parse: parseUnittest, ran: unittestRan, collectionErrors: unittestCollectionErrors },
  tap: { parse: parseTap, ran: tapRan, collectionErrors: () => [] },
};

export function testOutputReader(parser: TestParserName): TestOutputReader {
  return READERS[parser];
}

export function parseTestOutput(parser: TestParserName, output: string): TestReport {
  return READERS[parser].parse(output);
}
