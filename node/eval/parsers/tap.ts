// Why: node:test (and most JavaScript runners) report TAP: `ok N - name` / `not ok N - name`,
// nested suites indented four spaces under `# Subtest: name`. A test is named by its suites and
// itself joined with " > " (e.g. `chunk > keeps a shorter last chunk`), so names stay unique
// across describe blocks.
import { record, type TestReport } from "./types.ts";

const SUBTEST = /^(\s*)# Subtest: (.*)$/;
const RESULT = /^(\s*)(not ok|ok) \d+(?: - (.*?))?(?: # (SKIP|TODO)\b.*)?$/i;
const INDENT = 4;

function unescapeName(name: string): string {
  return name.replace(/\\(.)/g, "$1");
}

export function parseTap(output: string): TestReport {
  const report: TestReport = new Map();
  const suites: string[] = [];
  for (const raw of output.split("\n")) {
    const line = raw.trimEnd();
    const subtest = SUBTEST.exec(line);
    if (subtest) {
      const depth = Math.floor(subtest[1]!.length / INDENT);
      suites.length = depth;
      suites[depth] = unescapeName(subtest[2]!);
      continue;
    }
    const result = RESULT.exec(line);
    if (!result) continue;
    const depth = Math.floor(result[1]!.length / INDENT);
    const name = unescapeName(result[3] ?? suites[depth] ?? "");
    const path = [...suites.slice(0, depth), name].join(" > ");
    const directive = result[4]?.toUpperCase();
    if (directive === "SKIP" || directive === "TODO") record(report, path, "skipped");
    else record(report, path, result[2]!.toLowerCase() === "ok" ? "passed" : "failed");
  }
  return report;
}

/** A TAP header, a plan line (`1..N`) or node:test's `# tests N` summary. */
export function tapRan(output: string): boolean {
  return /^(TAP version \d+|\s*1\.\.\d+|# tests \d+)\s*$/m.test(output);
}
