// docs/wire.md is what scripts/gen-wire-docs.ts renders from protocol/ today: a schema changed
// without regenerating the page fails here.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { MODULES, renderWireDocs, WIRE_DOCS_PATH } from "./gen-wire-docs.ts";

describe("docs/wire.md", () => {
  test("is up to date with the zod schemas in protocol/ (regenerate: bun scripts/gen-wire-docs.ts)", () => {
    expect(readFileSync(WIRE_DOCS_PATH, "utf8")).toBe(renderWireDocs());
  });

  test("covers every module of protocol/ (add a new one to MODULES in gen-wire-docs.ts)", () => {
    const files = readdirSync(resolve(import.meta.dir, "../protocol")).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && f !== "index.ts");
    expect(MODULES.map((m) => m.file).sort()).toEqual(files.sort());
  });

  test("documents every served shape, all snake_case", () => {
    const page = renderWireDocs();
    for (const name of [
      "RecordedCall",
      "SessionCalls",
      "SessionInfo",
      "SessionTrajectory",
      "Trace",
      "AdminState",
      "AdminErrorBody",
      "OpenAiErrorBody",
      "AnthropicErrorBody",
      "TaskRequest",
      "SessionResult",
      "TaskStatus",
      "TaskResult",
      "SessionTiming",
    ]) {
      expect(page).toContain(`\n### ${name}\n`);
    }
    const fields = [...page.matchAll(/^\| `([^`]+)` \| .* \| (?:yes|no) \| .*\|$/gm)].map((m) => m[1]!);
    expect(fields.length).toBeGreaterThan(100);
    // SWE-bench's own upper-case test-list names are kept so its task files load unchanged.
    const sweBenchNames = new Set(["FAIL_TO_PASS", "PASS_TO_PASS"]);
    expect(fields.filter((f) => !/^[a-z0-9_]+$/.test(f) && !sweBenchNames.has(f))).toEqual([]);
  });
});
