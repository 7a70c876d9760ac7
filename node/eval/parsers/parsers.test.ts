// Real runs of pytest, unittest and node:test on a small project (pass, fail, error, skip, a
// module that does not import), parsed by the parser each task names; the signs the grading
// rules read (the suite ran, which files or modules failed to collect) from the same runs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testNeeding } from "../../../test/helpers/host-tools.ts";
import { parseTestOutput, testOutputReader } from "./index.ts";

const withPytest = testNeeding("pytest");

let dir: string;

function run(argv: string[], cwd: string): string {
  const r = Bun.spawnSync(argv, { cwd, stdout: "pipe", stderr: "pipe", env: { PATH: "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8" } });
  return `${r.stdout.toString()}\n${r.stderr.toString()}`;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "polar-parsers-"));
  mkdirSync(join(dir, "py/tests"), { recursive: true });
  writeFileSync(join(dir, "py/tests/__init__.py"), "");
  writeFileSync(
    join(dir, "py/tests/test_things.py"),
    [
      "import unittest",
      "import pytest",
      "class ThingTest(unittest.TestCase):",
      "    def test_ok(self):",
      "        self.assertEqual(1, 1)",
      "    def test_fail(self):",
      "        self.assertEqual(1, 2)",
      "    def test_error(self):",
      "        raise RuntimeError('boom')",
      "    def test_doc(self):",
      '        """A docstring shown by unittest -v."""',
      "    @unittest.skip('not today')",
      "    def test_skipped(self):",
      "        pass",
      "@pytest.mark.parametrize('n', [1, 2])",
      "def test_param(n):",
      "    assert n == 1",
      "",
    ].join("\n"),
  );
  writeFileSync(join(dir, "py/tests/test_broken.py"), "from nowhere import thing\n");
  mkdirSync(join(dir, "js/test"), { recursive: true });
  writeFileSync(
    join(dir, "js/test/a.test.js"),
    [
      "const { describe, it, test } = require('node:test');",
      "const assert = require('node:assert');",
      "describe('outer', () => {",
      "  it('passes', () => {});",
      "  it('fails', () => assert.equal(1, 2));",
      "  describe('inner', () => { it('deep # hash', () => {}); });",
      "});",
      "test('top', () => {});",
      "test('skipped', { skip: true }, () => {});",
      "",
    ].join("\n"),
  );
  writeFileSync(join(dir, "js/test/b.test.js"), "require('./missing');\n");
  writeFileSync(join(dir, "js/package.json"), '{"name":"x"}\n');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("test output parsers on real runs", () => {
  withPytest(
    "pytest -rA",
    () => {
      const report = parseTestOutput("pytest", run(["python3", "-m", "pytest", "-rA", "-p", "no:cacheprovider", "tests/test_things.py"], join(dir, "py")));
      expect(report.get("tests/test_things.py::ThingTest::test_ok")).toBe("passed");
      expect(report.get("tests/test_things.py::ThingTest::test_fail")).toBe("failed");
      expect(report.get("tests/test_things.py::ThingTest::test_error")).toBe("failed");
      expect(report.get("tests/test_things.py::test_param[1]")).toBe("passed");
      expect(report.get("tests/test_things.py::test_param[2]")).toBe("failed");
    },
    60_000,
  );

  withPytest(
    "pytest collection error: no test is reported, the file that failed is named, the session ran",
    () => {
      const output = run(["python3", "-m", "pytest", "-rA", "-p", "no:cacheprovider", "tests"], join(dir, "py"));
      const reader = testOutputReader("pytest");
      expect(reader.parse(output).size).toBe(0);
      expect(reader.collectionErrors(output)).toEqual(["tests/test_broken.py"]);
      expect(reader.ran(output)).toBe(true);
      expect(reader.ran("/usr/bin/python3: No module named pytest\n")).toBe(false);
    },
    60_000,
  );

  withPytest(
    "pytest -v lines",
    () => {
      const report = parseTestOutput("pytest", run(["python3", "-m", "pytest", "-v", "-p", "no:cacheprovider", "tests/test_things.py"], join(dir, "py")));
      expect(report.get("tests/test_things.py::ThingTest::test_ok")).toBe("passed");
      expect(report.get("tests/test_things.py::ThingTest::test_skipped")).toBe("skipped");
      expect(report.get("tests/test_things.py::test_param[2]")).toBe("failed");
    },
    60_000,
  );

  withPytest(
    "unittest -v (the test module imports pytest)",
    () => {
      const report = parseTestOutput("unittest", run(["python3", "-m", "unittest", "-v", "-b", "tests.test_things"], join(dir, "py")));
      expect(Object.fromEntries(report)).toEqual({
        "tests.test_things.ThingTest.test_ok": "passed",
        "tests.test_things.ThingTest.test_fail": "failed",
        "tests.test_things.ThingTest.test_error": "error",
        "tests.test_things.ThingTest.test_doc": "passed",
        "tests.test_things.ThingTest.test_skipped": "skipped",
      });
    },
    60_000,
  );

  test("unittest: a module that does not import is named; the run is seen even with no verdicts", () => {
    const output = run(["python3", "-m", "unittest", "-v", "tests.test_broken"], join(dir, "py"));
    const reader = testOutputReader("unittest");
    // Loaded by name, unittest names the module by its last part; discovered, by its dotted path.
    expect(reader.collectionErrors(output)).toEqual(["test_broken"]);
    expect(reader.ran(output)).toBe(true);
    expect(reader.parse(output).size).toBe(0);
  }, 60_000);

  test("unittest before Python 3.11 names the class only", () => {
    const report = parseTestOutput("unittest", "test_a (pkg.mod.Case) ... ok\ntest_b (pkg.mod.Case)\nDoc line ... FAIL\n");
    expect(Object.fromEntries(report)).toEqual({ "pkg.mod.Case.test_a": "passed", "pkg.mod.Case.test_b": "failed" });
  });

  test("node:test TAP", () => {
    const output = run(["node", "--test", "--test-reporter=tap", "test/"], join(dir, "js"));
    const report = parseTestOutput("tap", output);
    expect(report.get("outer > passes")).toBe("passed");
    expect(report.get("outer > fails")).toBe("failed");
    expect(report.get("outer > inner > deep # hash")).toBe("passed");
    expect(report.get("outer")).toBe("failed");
    expect(report.get("top")).toBe("passed");
    expect(report.get("skipped")).toBe("skipped");
    expect([...report].some(([name, outcome]) => name.endsWith("b.test.js") && outcome === "failed")).toBe(true);
    expect(testOutputReader("tap").ran(output)).toBe(true);
  }, 60_000);
});
