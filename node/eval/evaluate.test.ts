// The evaluators other than swe, and the choice among them: Polar's names accepted, an unknown
// one refused; session_completed from the harness's exit; none gives no reward; command in a
// fresh sandbox with the agent's patch, in the agent's sandbox, or on the final answer alone; the
// grading rules that fit a command (a runner that is not there, a timeout) make it invalid.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Task, type TaskInput } from "../../protocol/task.ts";
import { PolarError } from "../../protocol/errors.ts";
import { createProcessRuntime } from "../runtime/process/process.ts";
import { testNodeId } from "../../test/support/runtime/docker-test-env.ts";
import { BASE_COMMIT_ENV } from "./bundled.ts";
import { evaluate, evaluatorStrategy } from "./evaluate.ts";
import { freshEvalSandbox, runtimeSource } from "./sandbox-source.ts";

const runtime = createProcessRuntime({ warn: () => {} });
const nodeId = testNodeId("evaluate");
const source = runtimeSource(runtime, nodeId);
const repo = mkdtempSync(join(tmpdir(), "polar-eval-cmd-"));
writeFileSync(join(repo, "answer.txt"), "41\n");
afterAll(async () => {
  await runtime.removeLeftovers(nodeId);
  rmSync(repo, { recursive: true, force: true });
});

function task(evaluator: TaskInput["evaluator"]): Task {
  return Task.parse({
    task_id: "t",
    instruction: "make answer.txt say 42",
    runtime: {
      prepare: [
        { type: "upload_dir", source: repo, path: "/work" },
        { type: "exec", command: "git init -q && git add -A && git commit -q -m base", env: BASE_COMMIT_ENV },
      ],
    },
    evaluator,
  });
}

const harness = (exitCode: number | null, timedOut = false, finalOutput = "") => ({ exitCode, timedOut, finalOutput });

describe("evaluator choice", () => {
  test("Polar's names map to ours; no evaluator means none; an unknown one is refused", () => {
    expect(evaluatorStrategy(task({ strategy: "swebench_harness" }))).toBe("swe");
    expect(evaluatorStrategy(task({ strategy: "test_on_output" }))).toBe("command");
    expect(evaluatorStrategy(task(null))).toBe("none");
    expect(() => evaluatorStrategy(task({ strategy: "vibes" }))).toThrow(PolarError);
  });

  test("none: no reward", async () => {
    const result = await evaluate({ task: task({ strategy: "none" }), harness: harness(0), rolloutId: "r" });
    expect(result.reward).toBeNull();
    expect(result.detail.status).toBe("no_reward");
  });

  test("session_completed: 1 for exit 0 in time, 0 for a failure or a timeout", async () => {
    const t = task({ strategy: "session_completed" });
    expect((await evaluate({ task: t, harness: harness(0), rolloutId: "r" })).reward).toBe(1);
    const failed = await evaluate({ task: t, harness: harness(3), rolloutId: "r" });
    expect([failed.reward, failed.detail.reason]).toEqual([0, "the harness exited with 3"]);
    const late = await evaluate({ task: t, harness: harness(null, true), rolloutId: "r" });
    expect([late.reward, late.detail.reason]).toEqual([0, "the harness ran over its timeout"]);
  });
});

describe("command evaluator (process runtime)", () => {
  test("fresh sandbox: the agent's patch is applied there and the command's exit code and output decide", async () => {
    const t = task({ strategy: "test_on_output", config: { command: 'cat answer.txt && test "$(cat answer.txt)" = 42', expected_output: "42" } });
    const agent = await freshEvalSandbox(source, t, "agent");
    try {
      const before = await evaluate({ task: t, agentSandbox: agent, harness: harness(0), source, rolloutId: "r" });
      expect([before.reward, before.detail.status, before.detail.reason]).toEqual([0, "failed", "exit code 1, expected 0"]);
      await agent.exec({ command: "echo 42 > answer.txt" });
      const after = await evaluate({ task: t, agentSandbox: agent, harness: harness(0), source, rolloutId: "r" });
      expect([after.reward, after.detail.status]).toEqual([1, "passed"]);
      expect(after.detail.sandbox_id).not.toBe(agent.id);
      expect(after.detail.logs.command!.text).toBe("42\n");
    } finally {
      await agent.destroy();
    }
  }, 120_000);

  test("agent sandbox: the command runs where the agent worked, with the final answer on stdin", async () => {
    const t = task({ strategy: "command", config: { command: "grep -q forty-two", sandbox: "agent" } });
    const agent = await freshEvalSandbox(source, t, "agent");
    try {
      expect((await evaluate({ task: t, agentSandbox: agent, harness: harness(0, false, "it is forty-two"), rolloutId: "r" })).reward).toBe(1);
      const wrong = await evaluate({ task: t, agentSandbox: agent, harness: harness(0, false, "it is 41"), rolloutId: "r" });
      expect([wrong.reward, wrong.detail.sandbox_id]).toEqual([0, agent.id]);
    } finally {
      await agent.destroy();
    }
  }, 120_000);

  test("no command: the final answer is compared (exact, contains, regex)", async () => {
    const run = (config: Record<string, unknown>, answer: string) =>
      evaluate({ task: task({ strategy: "command", config }), harness: harness(0, false, answer), rolloutId: "r" });
    expect((await run({ expected_output: "42", match: "exact" }, " 42\n")).reward).toBe(1);
    expect((await run({ expected_output: "42", match: "exact" }, "about 42")).reward).toBe(0);
    expect((await run({ expected_output: "42" }, "about 42")).reward).toBe(1);
    expect((await run({ expected_output: "^answer: \\d+$", match: "regex" }, "work\nanswer: 42")).reward).toBe(1);
  });

  test("a command that cannot start, or runs over its timeout, is an invalid evaluation: no reward, its cause named", async () => {
    const agent = await freshEvalSandbox(source, task({ strategy: "command", config: { command: "true" } }), "agent");
    try {
      const missing = await evaluate({
        task: task({ strategy: "command", config: { command: "polar-no-such-checker answer.txt", sandbox: "agent" } }),
        agentSandbox: agent,
        harness: harness(0),
        rolloutId: "r",
      });
      expect([missing.reward, missing.detail.status, missing.detail.evaluation_error]).toEqual([null, "invalid", "test_runner_missing"]);
      expect(missing.detail.reason).toContain("polar-no-such-checker");
      const module = await evaluate({
        task: task({ strategy: "command", config: { command: "python3 -m polar_no_such_checker", sandbox: "agent" } }),
        agentSandbox: agent,
        harness: harness(0),
        rolloutId: "r",
      });
      expect([module.reward, module.detail.evaluation_error]).toEqual([null, "test_runner_missing"]);
      const slow = await evaluate({
        task: task({ strategy: "command", config: { command: "sleep 30", sandbox: "agent", timeout_seconds: 1 } }),
        agentSandbox: agent,
        harness: harness(0),
        rolloutId: "r",
      });
      expect([slow.reward, slow.detail.status, slow.detail.evaluation_error]).toEqual([null, "invalid", "evaluator_timeout"]);
      // Expecting exit 127 is the task's choice: then it is a verdict, not a missing runner.
      const expected = await evaluate({
        task: task({ strategy: "command", config: { command: "polar-no-such-checker", sandbox: "agent", expected_exit_code: 127 } }),
        agentSandbox: agent,
        harness: harness(0),
        rolloutId: "r",
      });
      expect([expected.reward, expected.detail.status]).toEqual([1, "passed"]);
    } finally {
      await agent.destroy();
    }
  }, 120_000);
});
