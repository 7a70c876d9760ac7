// `polar tasks import exercism` end to end, as a user runs it: on a copy of the upstream layout
// made here (three of the shared exercises, one written here that is in no bundle, with a test
// helper and a read-only editor file, one without .meta/config.json, and a refactoring exercise
// whose stub already passes), and on the 60 shared exercises — whose import must reproduce the
// committed task file byte for byte — then `polar tasks validate` (gold → 1, unmodified → 0) in
// the process runtime and in Docker.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { patchFiles } from "../node/eval/collect-patch.ts";
import { BOOKWORM, dockerForTests } from "./support/runtime/docker-test-env.ts";

const ROOT = resolve(import.meta.dir, "..");
const BUNDLE = join(ROOT, "tasks/exercism-python/exercises.jsonl");
const COMMITTED = join(ROOT, "tasks/exercism-python/tasks.jsonl");
const tmp = mkdtempSync(join(tmpdir(), "polar-exercism-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface Row {
  task_id: string;
  base_commit: string;
  instruction: string;
  runtime: { prepare: { type: string; path?: string; content?: string }[] };
  evaluator: { config: { test_command: string; parser: string; timeout_seconds: number } };
  patch: string;
  test_patch: string;
  FAIL_TO_PASS: string[];
  PASS_TO_PASS: string[];
  metadata: Record<string, unknown>;
  mock_wrong_patch?: string;
}

function polar(args: string[]): { code: number; stdout: string; stderr: string } {
  const run = Bun.spawnSync(["bun", join(ROOT, "bin/polar.ts"), ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe", env: process.env });
  return { code: run.exitCode ?? -1, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

function rows(text: string): Row[] {
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Row);
}

function validate(
  file: string,
  runtime: string,
): { task_id: string; ok: boolean; gold_reward: number | null; empty_reward: number | null; problem: string | null }[] {
  const run = polar(["tasks", "validate", file, "--json", "--runtime", runtime, "--concurrency", "2"]);
  const results = rows(run.stdout) as unknown as ReturnType<typeof validate>;
  expect(results.filter((r) => !r.ok)).toEqual([]);
  expect(run.code).toBe(0);
  return results;
}

function writeExercise(dir: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

const bundle = new Map(
  rows(readFileSync(BUNDLE, "utf8")).map((r) => [(r as unknown as { slug: string }).slug, (r as unknown as { files: Record<string, string> }).files]),
);

/** An exercise in no bundle: a helper imported by the tests, an editor file the stub imports, one test the stub already passes. */
const PAY_IO: Record<string, string> = {
  ".docs/instructions.md": "# Instructions\n\nReturn the total of a list of payments in cents.\n",
  ".docs/instructions.append.md": '# Instructions append\n\nRaise `ValueError("negative payment")` for a negative payment.\n',
  ".meta/config.json": JSON.stringify({
    authors: ["polar"],
    files: { solution: ["pay_io.py"], test: ["pay_io_test.py", "test_utils.py"], example: [".meta/example.py"], editor: ["money.py"] },
  }),
  ".meta/example.py":
    'from money import CENT\n\n\ndef total(payments):\n    if any(p < 0 for p in payments):\n        raise ValueError("negative payment")\n    return sum(payments) * CENT\n',
  "money.py": "CENT = 1\n",
  "pay_io.py": "from money import CENT\n\n\ndef total(payments):\n    return 0\n",
  "test_utils.py": "PAYMENTS = [3, 4]\n",
  "pay_io_test.py":
    "import unittest\n\nfrom pay_io import total\nfrom test_utils import PAYMENTS\n\n\nclass PayIoTest(unittest.TestCase):\n" +
    "    def test_empty(self):\n        self.assertEqual(total([]), 0)\n\n" +
    "    def test_sum(self):\n        self.assertEqual(total(PAYMENTS), 7)\n\n" +
    '    def test_negative(self):\n        with self.assertRaises(ValueError) as err:\n            total([-1])\n        self.assertEqual(err.exception.args[0], "negative payment")\n',
};

/** A refactoring exercise: the stub already passes, so it cannot be a task. */
const TIDY: Record<string, string> = {
  ".docs/instructions.md": "# Instructions\n\nRefactor.\n",
  "tidy.py": "def value():\n    return 1\n",
  "tidy_test.py":
    "import unittest\nfrom tidy import value\n\n\nclass TidyTest(unittest.TestCase):\n    def test_value(self):\n        self.assertEqual(value(), 1)\n",
  ".meta/example.py": "def value():\n    return 1\n",
};

const practice = join(tmp, "exercises", "practice");
const layoutOut = join(tmp, "layout-tasks.jsonl");
let layoutRun: { code: number; stdout: string; stderr: string } | undefined;

/** Writes the layout copy and imports it, once for the tests that read the result. */
function importLayout(): { code: number; stdout: string; stderr: string } {
  if (layoutRun) return layoutRun;
  for (const slug of ["bob", "sieve", "react"]) writeExercise(join(practice, slug), bundle.get(slug)!);
  writeExercise(join(practice, "pay-io"), PAY_IO);
  const { ".meta/config.json": _config, ...sieveWithoutConfig } = bundle.get("sieve")!;
  writeExercise(
    join(practice, "sieve-no-config"),
    Object.fromEntries(
      Object.entries(sieveWithoutConfig).map(([p, t]) => [
        p.replace(/^sieve/, "sieve_no_config"),
        t.replaceAll("from sieve import", "from sieve_no_config import"),
      ]),
    ),
  );
  writeExercise(join(practice, "tidy"), TIDY);
  layoutRun = polar(["tasks", "import", "exercism", practice, "--out", layoutOut, "--json"]);
  return layoutRun;
}

describe("polar tasks import exercism on a copy of the upstream layout", () => {
  const out = layoutOut;
  let imported: Row[] = [];

  test("imports every exercise that can be a task, skips the one that cannot with the reason", () => {
    const run = importLayout();
    expect(run.code).toBe(0);
    const progress = rows(
      run.stderr
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .join("\n"),
    ) as unknown as { slug: string; ok: boolean; problem: string | null }[];
    expect(progress.map((p) => [p.slug, p.ok]).sort()).toEqual([
      ["bob", true],
      ["pay-io", true],
      ["react", true],
      ["sieve", true],
      ["sieve-no-config", true],
      ["tidy", false],
    ]);
    expect(progress.find((p) => p.slug === "tidy")!.problem).toContain("the untouched stub already passes every test");
    imported = rows(readFileSync(out, "utf8"));
    expect(imported.map((r) => r.task_id)).toEqual(["bob", "pay-io", "react", "sieve", "sieve-no-config"].map((s) => `exercism-python-${s}`));
  }, 300_000);

  test("the agent's repository holds the stub and editor files only; tests and reference solution are hidden in the patches", () => {
    const payIo = imported.find((r) => r.task_id === "exercism-python-pay-io")!;
    const uploads = payIo.runtime.prepare.filter((a) => a.type === "upload_file");
    expect(uploads.map((a) => a.path).sort()).toEqual(["/work/money.py", "/work/pay_io.py"]);
    expect(uploads.find((a) => a.path === "/work/pay_io.py")!.content).toBe(PAY_IO["pay_io.py"]!);
    expect(patchFiles(payIo.patch)).toEqual(["pay_io.py"]);
    expect(patchFiles(payIo.test_patch).sort()).toEqual(["pay_io_test.py", "test_utils.py"]);
    expect(payIo.evaluator.config).toEqual({ test_command: "python3 -m unittest -v -b pay_io_test test_utils", parser: "unittest", timeout_seconds: 120 });
    // Found by running them: the stub passes test_empty already, fails the other two.
    expect(payIo.FAIL_TO_PASS).toEqual(["pay_io_test.PayIoTest.test_negative", "pay_io_test.PayIoTest.test_sum"]);
    expect(payIo.PASS_TO_PASS).toEqual(["pay_io_test.PayIoTest.test_empty"]);
    expect(payIo.instruction).toContain('Raise `ValueError("negative payment")`');
    expect(payIo.instruction).toContain("`money.py` is a helper you may read but not change");
    expect(payIo.metadata).toEqual({ source: "exercism/python", slug: "pay-io", language: "python", evaluation_requires: ["python3"] });
    // A wrong fix the tests reject, for the mock policy's failing sessions.
    expect(patchFiles(payIo.mock_wrong_patch!)).toEqual(["pay_io.py"]);
    for (const row of imported) {
      const given = row.runtime.prepare.flatMap((a) => (a.path ? [a.path] : []));
      expect(given.some((p) => p.includes("_test.py") || p.includes(".meta/"))).toBe(false);
    }
    // Without .meta/config.json the conventions find the same roles, and the same tests under the new module name.
    const sieve = imported.find((r) => r.task_id === "exercism-python-sieve")!;
    const noConfig = imported.find((r) => r.task_id === "exercism-python-sieve-no-config")!;
    expect(noConfig.FAIL_TO_PASS).toEqual(sieve.FAIL_TO_PASS.map((n) => n.replace(/^sieve_test/, "sieve_no_config_test")));
  });

  test("every imported task validates in the process runtime", () => {
    expect(importLayout().code).toBe(0);
    expect(validate(out, "process").length).toBe(5);
  }, 300_000);
});

describe("polar tasks import exercism on the 60 shared exercises", () => {
  test("reproduces the committed task file byte for byte, 60 tasks", () => {
    const out = join(tmp, "exercism-60.jsonl");
    const run = polar(["tasks", "import", "exercism", BUNDLE, "--out", out, "--concurrency", "2"]);
    expect(run.code).toBe(0);
    const text = readFileSync(out, "utf8");
    expect(rows(text).length).toBe(60);
    expect(text === readFileSync(COMMITTED, "utf8")).toBe(true);
  }, 900_000);

  test("all 60 valid in the process runtime (gold → 1, unmodified → 0)", () => {
    const results = validate(COMMITTED, "process");
    expect(results.length).toBe(60);
    expect(results.every((r) => r.gold_reward === 1 && r.empty_reward === 0)).toBe(true);
  }, 900_000);
});

const docker = await dockerForTests("polar tasks import exercism (docker)", [BOOKWORM]);
if (docker) {
  test("all 60 shared exercises valid in Docker (gold → 1, unmodified → 0)", () => {
    const results = validate(COMMITTED, "docker");
    expect(results.length).toBe(60);
    expect(results.every((r) => r.gold_reward === 1 && r.empty_reward === 0)).toBe(true);
  }, 1_800_000);

  test("the tasks imported from the layout copy validate in Docker too", () => {
    expect(importLayout().code).toBe(0);
    expect(validate(layoutOut, "docker").length).toBe(5);
  }, 900_000);
}
