// Why: a task names its test parser (evaluator.config.parser); this maps the name to the parser.
import type { TestParserName } from "../../../protocol/evaluation.ts";
import { parsePytest } from "./pytest.ts";
import { parseTap } from "./tap.ts";
import type { TestReport } from "./types.ts";
import { parseUnittest } from "./unittest.ts";

export type { TestReport } from "./types.ts";

const PARSERS: Record<TestParserName, (output: string) => TestReport> = {
  pytest: parsePytest,
  unittest: parseUnittest,
  tap: parseTap,
};

export function parseTestOutput(parser: TestParserName, output: string): TestReport {
  return PARSERS[parser](output);
}
