// SWE-bench's grading rules on real runs: a node (process runtime, bwrap), the mock engine, and
// small Python tasks whose "agent" is a command harness that makes one real LLM call through the
// gateway (so each rollout has a trace to mask) and then edits the repository the way a patch
// that defeats the tests would. Each invalid evaluation must come back masked — status ERROR,
// loss mask all 0, no reward in the metadata, its cause named — and counted in the node's
// status; a skipped FAIL_TO_PASS test is the agent's failure (reward 0, trainable). A Python task
// whose evaluation python has no pytest is refused at submit (422 naming python3:pytest) and, on
// the pipeline's path (a coordinator's assignment), fails at INIT without running its harness.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RolloutTrace, SessionResult, TaskRequest } from "../protocol/rollout.ts";
import type { TaskInput } from "../protocol/task.ts";
import { EVALUATION_PATH } from "../node/eval/sandbox-source.ts";
import { pollTask, startNodeStack, submit, type NodeStack } from "./helpers/node-stack.ts";
import { testNeeding } from "./helpers/host-tools.ts";
import { rolloutFetch } from "./helpers/rollout-fetch.ts";

const it = testNeeding("bwrap", "pytest");

/** Where the sandbox sees a Python installation without pytest: a venv over the system python3 without its site-packages. */
const NO_PYTEST = "/opt/polar-no-pytest";

const CALC_BUGGY = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n";
const TESTS = "from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n";
const COMMIT_ENV = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@localhost", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@localhost" };

/** What the agent writes to calc.py (after one LLM call). */
const AGENT_EDITS: Record<string, string> = {
  fix: "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
  // The patch prints unittest's verdict lines for the tests itself and leaves the process with exit 3.
  fake_passed:
    "import os, sys\nprint('test_add (tests.test_calc.CalcTest.test_add) ... ok')\nprint('test_sub (tests.test_calc.CalcTest.test_sub) ... ok')\nsys.stdout.flush()\nos._exit(3)\n",
  skip: "import pytest\n\n\ndef add(a, b):\n    pytest.skip('not implemented yet')\n\n\ndef sub(a, b):\n    return a - b\n",
  hang: "def add(a, b):\n    while True:\n        pass\n\n\ndef sub(a, b):\n    return a - b\n",
  broken: "def add(a, b)\n    return a + b\n",
};

/** One LLM call through the gateway, then calc.py rewritten: the command harness's argv. */
function agentArgv(edit: keyof typeof AGENT_EDITS): string[] {
  const script = [
    "import json, os, sys, urllib.request",
    "body = json.dumps({'model': 'Qwen/Qwen3-8B', 'messages': [{'role': 'user', 'content': 'fix calc.add'}], 'max_tokens': 16}).encode()",
    "req = urllib.request.Request(os.environ['OPENAI_BASE_URL'] + '/chat/completions', data=body, headers={'content-type': 'application/json', 'authorization': 'Bearer ' + os.environ['OPENAI_API_KEY']})",
    "print(json.load(urllib.request.urlopen(req))['choices'][0]['message']['content'][:40])",
    `open('/work/calc.py', 'w').write(${JSON.stringify(AGENT_EDITS[edit])})`,
  ].join("\n");
  return ["/usr/bin/python3", "-c", script];
}

const UNITTESTS =
  "import unittest\n\nfrom calc import add, sub\n\n\nclass CalcTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_sub(self):\n        self.assertEqual(sub(5, 3), 2)\n";

interface EvaluatorFields {
  /** swe, or Polar's name for it (swebench_harness): the same rules. */
  strategy?: string;
  test_command: string;
  parser?: string;
  timeout_seconds?: number;
  requires?: string[];
  env?: Record<string, string>;
}

function task(id: string, extraFiles: Record<string, string>, evaluator: EvaluatorFields, tests: "pytest" | "unittest" = "pytest"): TaskInput {
  const testFiles = tests === "pytest" ? { "tests/test_calc.py": TESTS } : { "tests/__init__.py": "", "tests/test_calc.py": UNITTESTS };
  const files = { "calc.py": CALC_BUGGY, ...testFiles, ...extraFiles };
  return {
    task_id: id,
    instruction: "calc.add subtracts; make it add.",
    runtime: {
      workdir: "/work",
      prepare: [
        ...Object.entries(files).map(([path, content]) => ({ type: "upload_file" as const, path: `/work/${path}`, content })),
        { type: "exec" as const, command: "git init -q && git add -A && git commit -q -m base", cwd: "/work", env: COMMIT_ENV },
      ],
    },
    evaluator: {
      strategy: evaluator.strategy ?? "swe",
      config: { test_command: evaluator.test_command, parser: evaluator.parser ?? "pytest", timeout_seconds: evaluator.timeout_seconds ?? 60 },
      env: evaluator.env ?? {},
      ...(evaluator.requires ? { requires: evaluator.requires } : {}),
    },
    FAIL_TO_PASS: [tests === "pytest" ? "tests/test_calc.py::test_add" : "tests.test_calc.CalcTest.test_add"],
    PASS_TO_PASS: [tests === "pytest" ? "tests/test_calc.py::test_sub" : "tests.test_calc.CalcTest.test_sub"],
  };
}

const PYTEST = "python3 -m pytest -rA -p no:cacheprovider tests";
const TASKS: TaskInput[] = [
  task("grade-valid", {}, { test_command: PYTEST }),
  // The runner is not installed (as `python3 -m pytest` without pytest); the task states only git,
  // so the submit-time check lets it through and the grading rules must catch it.
  task("grade-runner-missing", {}, { test_command: "python3 -m polar_no_such_runner -rA tests", requires: ["git"] }),
  // pytest ran, but the task names the unittest parser: nothing parsed, no sign of a unittest run.
  task("grade-no-results", {}, { strategy: "swebench_harness", test_command: "python3 -m pytest -q -p no:cacheprovider tests", parser: "unittest" }),
  task("grade-exit-without-failure", {}, { test_command: "python3 -m unittest -v", parser: "unittest" }, "unittest"),
  // -v: pytest names skipped tests only in its verbose lines (-rA's summary groups them by reason).
  task("grade-skipped-f2p", {}, { test_command: `${PYTEST} -v` }),
  task("grade-timeout", {}, { test_command: PYTEST, timeout_seconds: 3 }),
  // A test module outside the task's tests needs a package this environment lacks: pytest stops at collection.
  task("grade-collection-error", { "tests/test_io.py": "import polar_missing_dependency\n\n\ndef test_io():\n    pass\n" }, { test_command: PYTEST }),
  // The agent's syntax error keeps the task's own test file from collecting: its failure, not the suite's.
  task("grade-own-collection-error", {}, { test_command: PYTEST }),
  // The evaluation runs with a python3 that has no pytest (nothing stated: python3:pytest is derived).
  task("needs-pytest", {}, { test_command: PYTEST, env: { PATH: `${NO_PYTEST}/bin:${EVALUATION_PATH}` } }),
];

const EDIT_OF: Record<string, keyof typeof AGENT_EDITS> = {
  "grade-exit-without-failure": "fake_passed",
  "grade-skipped-f2p": "skip",
  "grade-timeout": "hang",
  "grade-own-collection-error": "broken",
};

let stack: NodeStack;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "polar-grading-"));
  writeFileSync(join(dir, "tasks.jsonl"), TASKS.map((t) => JSON.stringify(t)).join("\n") + "\n");
  // A venv by hand: bin/python3 → the system python3, pyvenv.cfg without system site-packages.
  const venv = join(dir, "no-pytest");
  mkdirSync(join(venv, "bin"), { recursive: true });
  symlinkSync("/usr/bin/python3", join(venv, "bin", "python3"));
  writeFileSync(join(venv, "pyvenv.cfg"), "home = /usr/bin\ninclude-system-site-packages = false\n");
  stack = await startNodeStack(
    { runtime: "process", tasks: join(dir, "tasks.jsonl"), workers: { init: 4, run: 4, postrun: 4, ready_backlog: 2 }, sampling: { max_tokens_cap: 64 } },
    { mounts: [{ host: venv, sandbox: NO_PYTEST, readonly: true }] },
  );
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

async function runOne(taskId: string): Promise<SessionResult> {
  const { status, json } = await submit(stack.node.url, {
    task_id: taskId,
    agent: { harness: "command", settings: { argv: agentArgv(EDIT_OF[taskId] ?? "fix") } },
    num_samples: 1,
  });
  expect({ status, json }).toEqual({ status: 200, json: { task_id: taskId, status: "running" } });
  const done = await pollTask(stack.node.url, taskId, 150_000);
  expect(done.results).toHaveLength(1);
  return SessionResult.parse(done.results[0]);
}

function expectMasked(r: SessionResult, evaluationError: string): void {
  expect(r.status).toBe("ERROR");
  expect(r.metadata.failure).toMatchObject({ cause: "evaluation_invalid" });
  expect(r.metadata.reward).toBeUndefined();
  expect(r.metadata.evaluation).toMatchObject({ status: "invalid", evaluation_error: evaluationError, reward_given: false });
  expect(r.trajectory.metadata.training_filter).toMatchObject({ masked: true, cause: "evaluation_invalid", evaluation_error: evaluationError });
  // The agent's one LLM call is there, and nothing of it trains.
  expect(r.trajectory.traces.length).toBeGreaterThan(0);
  for (const raw of r.trajectory.traces) {
    const t = RolloutTrace.parse(raw);
    expect(t.response_ids.length).toBeGreaterThan(0);
    expect(t.loss_mask.every((m) => m === 0)).toBe(true);
    expect((t.metadata.training_filter as { masked: boolean }).masked).toBe(true);
  }
}

function testOutcome(r: SessionResult, name: string): string | undefined {
  return ((r.metadata.evaluation as { tests: { name: string; outcome: string }[] }).tests ?? []).find((t) => t.name === name)?.outcome;
}

describe("grading rules on real runs (process runtime)", () => {
  it("a fixed bug is graded: reward 1, trainable", async () => {
    const r = await runOne("grade-valid");
    expect(r.status).toBe("COMPLETED");
    expect(r.metadata.reward).toBe(1);
    expect(r.metadata.evaluation).toMatchObject({ status: "resolved", evaluation_error: null });
    expect(RolloutTrace.parse(r.trajectory.traces[0]).loss_mask).toContain(1);
  }, 180_000);

  it("the test runner is missing → invalid (test_runner_missing), masked", async () => {
    const r = await runOne("grade-runner-missing");
    expectMasked(r, "test_runner_missing");
    expect((r.metadata.evaluation as { reason: string }).reason).toContain("No module named polar_no_such_runner");
  }, 180_000);

  it("no test results and no sign the suite ran → invalid (no_test_results), masked", async () => {
    expectMasked(await runOne("grade-no-results"), "no_test_results");
  }, 180_000);

  it("exit 3 while the log shows only the passing verdicts the patch printed → invalid (exit_without_failure), masked", async () => {
    const r = await runOne("grade-exit-without-failure");
    expectMasked(r, "exit_without_failure");
    expect((r.metadata.evaluation as { exit_code: number }).exit_code).toBe(3);
    expect(testOutcome(r, "tests.test_calc.CalcTest.test_add")).toBe("passed");
  }, 180_000);

  it("a skipped FAIL_TO_PASS test counts as failed: reward 0, unresolved, trainable", async () => {
    const r = await runOne("grade-skipped-f2p");
    expect(r.status).toBe("COMPLETED");
    expect(r.metadata.reward).toBe(0);
    expect(r.metadata.evaluation).toMatchObject({
      status: "unresolved",
      evaluation_error: null,
      fail_to_pass: { passed: 0, total: 1 },
      pass_to_pass: { passed: 1, total: 1 },
    });
    expect(testOutcome(r, "tests/test_calc.py::test_add")).toBe("skipped");
  }, 180_000);

  it("tests that run over the evaluator's timeout → invalid (evaluator_timeout), masked", async () => {
    expectMasked(await runOne("grade-timeout"), "evaluator_timeout");
  }, 180_000);

  it("a collection error outside the task's tests stops the suite → invalid (collection_error), masked", async () => {
    const r = await runOne("grade-collection-error");
    expectMasked(r, "collection_error");
    expect((r.metadata.evaluation as { reason: string }).reason).toContain("tests/test_io.py");
  }, 180_000);

  it("a collection error in the task's own test file (the agent broke an import) is the agent's failure: reward 0, tests errored", async () => {
    const r = await runOne("grade-own-collection-error");
    expect(r.status).toBe("COMPLETED");
    expect(r.metadata.reward).toBe(0);
    expect(r.metadata.evaluation).toMatchObject({ status: "unresolved", evaluation_error: null });
    expect(testOutcome(r, "tests/test_calc.py::test_add")).toBe("error");
    expect(testOutcome(r, "tests/test_calc.py::test_sub")).toBe("error");
  }, 180_000);

  it("a Python task whose evaluation python lacks pytest: refused at submit (422 naming python3:pytest); failed at INIT on the pipeline's path, harness never run", async () => {
    const refused = await submit(stack.node.url, {
      task_id: "needs-pytest",
      agent: { harness: "command", settings: { argv: agentArgv("fix") } },
      num_samples: 1,
    });
    expect(refused.status).toBe(422);
    expect(refused.json.detail).toContain("python3:pytest");
    expect(refused.json.detail).toContain("python3 cannot import pytest");

    // A coordinator's assignment goes straight to the pipeline: the same check fails it at INIT.
    const row = TASKS.find((t) => t.task_id === "needs-pytest")!;
    const request = TaskRequest.parse({
      task_id: "needs-pytest",
      instruction: row.instruction,
      runtime: row.runtime,
      evaluator: row.evaluator,
      agent: { harness: "command", settings: { argv: agentArgv("fix") } },
    });
    expect(await stack.node.tasks.submit({ request, harness: "command", strategy: "per-call" })).toEqual({ accepted: true });
    const done = await pollTask(stack.node.url, "needs-pytest", 60_000);
    const r = SessionResult.parse(done.results[0]);
    expect(r.status).toBe("ERROR");
    expect(r.metadata.failure).toMatchObject({ cause: "evaluation_invalid" });
    expect(r.metadata.evaluation).toMatchObject({ status: "invalid", evaluation_error: "requirement_missing" });
    expect(r.metadata.agent).toBeUndefined();
    expect(r.trajectory.traces).toEqual([]);
    expect(r.timing.run_ms).toBe(0);
  }, 180_000);

  it("the node's status counts invalid evaluations by cause", async () => {
    const status = (await (await rolloutFetch(`${stack.node.url}/rollout/status`)).json()) as { evaluation_errors: Record<string, number> };
    expect(status.evaluation_errors).toMatchObject({
      test_runner_missing: 1,
      no_test_results: 1,
      exit_without_failure: 1,
      evaluator_timeout: 1,
      collection_error: 1,
      requirement_missing: 1,
    });
  }, 30_000);
});
