// The grading rules' edges on outputs as the runners print them (the real runs, through a node,
// are in test/evaluation-grading.test.ts): which run is invalid and why, and which is the
// agent's own failure.
import { describe, expect, test } from "bun:test";
import { Task } from "../../protocol/task.ts";
import { gradeTestRun, type TestRun } from "./grading.ts";

const pyTask = Task.parse({
  task_id: "t",
  instruction: "i",
  FAIL_TO_PASS: ["tests/test_a.py::test_fix"],
  PASS_TO_PASS: ["tests/test_a.py::test_keep"],
  test_patch: "diff --git a/tests/test_a.py b/tests/test_a.py\n--- a/tests/test_a.py\n+++ b/tests/test_a.py\n@@ -1 +1 @@\n-x\n+y\n",
});
const unitTask = Task.parse({
  task_id: "u",
  instruction: "i",
  FAIL_TO_PASS: ["tests.test_env.EnvTest.test_fix"],
  PASS_TO_PASS: ["tests.test_values.ValuesTest.test_keep"],
});

const run = (output: string, exit_code: number | null = 0, timed_out = false): TestRun => ({ output, exit_code, timed_out, timeout_seconds: 60 });

const PYTEST_HEADER = "============================= test session starts ==============================\ncollected 2 items\n";

describe("grading rules", () => {
  test("a clean pytest run is graded: resolved only when every named test passed", () => {
    const both = gradeTestRun(pyTask, "pytest", run(`${PYTEST_HEADER}PASSED tests/test_a.py::test_fix\nPASSED tests/test_a.py::test_keep\n`));
    expect([both.valid, both.resolved]).toEqual([true, true]);
    const one = gradeTestRun(pyTask, "pytest", run(`${PYTEST_HEADER}FAILED tests/test_a.py::test_fix - assert 1 == 2\nPASSED tests/test_a.py::test_keep\n`, 1));
    expect([one.valid, one.resolved, one.f2p, one.p2p]).toEqual([true, false, 0, 1]);
  });

  test("a timeout wins over anything the partial log says", () => {
    const g = gradeTestRun(pyTask, "pytest", run(`${PYTEST_HEADER}PASSED tests/test_a.py::test_fix\n`, null, true));
    expect(g.valid ? null : g.error).toBe("evaluator_timeout");
  });

  test("exit 127 with nothing parsed, or python's own -m message: the runner is missing", () => {
    const shell = gradeTestRun(pyTask, "pytest", run("sh: 1: pytest: not found\n", 127));
    expect(shell.valid ? null : [shell.error, shell.reason]).toEqual(["test_runner_missing", "the test runner could not start: sh: 1: pytest: not found"]);
    const module = gradeTestRun(pyTask, "pytest", run("/usr/bin/python3: No module named pytest\n", 1));
    expect(module.valid ? null : module.error).toBe("test_runner_missing");
    // A test's own ImportError is not the runner's absence.
    const inTest = gradeTestRun(
      pyTask,
      "pytest",
      run(`${PYTEST_HEADER}FAILED tests/test_a.py::test_fix - ModuleNotFoundError: No module named 'yaml'\nPASSED tests/test_a.py::test_keep\n`, 1),
    );
    expect(inTest.valid).toBe(true);
  });

  test("pytest exit 5 (no tests collected) or a run killed without a failure: exit_without_failure", () => {
    const none = gradeTestRun(
      pyTask,
      "pytest",
      run(
        "============================= test session starts ==============================\ncollected 0 items\n\n============================ no tests ran in 0.01s =============================\n",
        5,
      ),
    );
    expect(none.valid ? null : none.error).toBe("exit_without_failure");
    const killed = gradeTestRun(pyTask, "pytest", run(`${PYTEST_HEADER}tests/test_a.py::test_keep PASSED [ 50%]\n`, null));
    expect(killed.valid ? null : killed.error).toBe("exit_without_failure");
  });

  test("nothing parsed and no sign of a run: no_test_results, for each parser", () => {
    for (const parser of ["pytest", "unittest", "tap"] as const) {
      const g = gradeTestRun(pyTask, parser, run("Segmentation fault\n", 0));
      expect(g.valid ? null : g.error).toBe("no_test_results");
    }
  });

  test("pytest: a collection error in the task's own file is the agent's (tests error, reward 0); elsewhere it voids the run", () => {
    const own = gradeTestRun(
      pyTask,
      "pytest",
      run(`${PYTEST_HEADER}ERROR tests/test_a.py - SyntaxError: invalid syntax\n!!!! Interrupted: 1 error during collection !!!!\n`, 2),
    );
    expect([own.valid, own.resolved]).toEqual([true, false]);
    expect(own.tests.filter((t) => t.expected !== null).map((t) => t.outcome)).toEqual(["error", "error"]);
    const other = gradeTestRun(
      pyTask,
      "pytest",
      run(`${PYTEST_HEADER}ERROR tests/test_io.py - ModuleNotFoundError: No module named 'boto3'\n!!!! Interrupted: 1 error during collection !!!!\n`, 2),
    );
    expect(other.valid ? null : other.error).toBe("collection_error");
  });

  test("unittest: a module that does not import, named by dotted path or by its last part", () => {
    const ownDotted = gradeTestRun(
      unitTask,
      "unittest",
      run(
        "ImportError: Failed to import test module: tests.test_env\ntest_keep (tests.test_values.ValuesTest.test_keep) ... ok\n\nRan 2 tests in 0.001s\n\nFAILED (errors=1)\n",
        1,
      ),
    );
    expect([ownDotted.valid, ownDotted.resolved, ownDotted.p2p]).toEqual([true, false, 1]);
    const ownLeaf = gradeTestRun(
      unitTask,
      "unittest",
      run("ImportError: Failed to import test module: test_env\n\nRan 1 test in 0.001s\n\nFAILED (errors=1)\n", 1),
    );
    expect(ownLeaf.valid).toBe(true);
    // Another module failed and the task's tests all ran: the score stands.
    const elsewhere = gradeTestRun(
      unitTask,
      "unittest",
      run(
        "ImportError: Failed to import test module: tests.test_io\ntest_fix (tests.test_env.EnvTest.test_fix) ... ok\ntest_keep (tests.test_values.ValuesTest.test_keep) ... ok\n\nRan 3 tests in 0.001s\n\nFAILED (errors=1)\n",
        1,
      ),
    );
    expect([elsewhere.valid, elsewhere.resolved]).toEqual([true, true]);
  });

  test("a skipped FAIL_TO_PASS test is a failure", () => {
    const g = gradeTestRun(
      pyTask,
      "pytest",
      run(`${PYTEST_HEADER}tests/test_a.py::test_fix SKIPPED (later) [ 50%]\ntests/test_a.py::test_keep PASSED [100%]\n`),
    );
    expect([g.valid, g.resolved, g.f2p]).toEqual([true, false, 0]);
  });
});
