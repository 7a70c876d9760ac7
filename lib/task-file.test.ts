// The task-file loader: SWE-bench rows load unchanged, unknown fields are kept, malformed rows
// are reported by line and field while the rest loads; the bundled set is complete and current.
import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { loadTaskFile, parseTaskLines } from "./task-file.ts";

const REPO_ROOT = resolve(import.meta.dir, "..");

describe("task files", () => {
  test("a SWE-bench instance row: JSON-string test lists, instance_id and problem_statement as fallbacks, extra fields kept", () => {
    const row = {
      instance_id: "astropy__astropy-12907",
      repo: "astropy/astropy",
      base_commit: "d16bfe05a744909de4b27f5875fe0d4ed41ce607",
      problem_statement: "Modeling's `separability_matrix` does not compute separability correctly",
      patch: "diff --git a/x b/x\n",
      test_patch: "diff --git a/t b/t\n",
      FAIL_TO_PASS: '["astropy/modeling/tests/test_separable.py::test_separable[compound_model6-result6]"]',
      PASS_TO_PASS: "[]",
      version: "4.3",
      environment_setup_commit: "298ccb478e6bf092953bca67a3d29dc6c35f6752",
    };
    const { tasks, issues } = parseTaskLines(JSON.stringify(row), "/data");
    expect(issues).toEqual([]);
    const task = tasks[0]!;
    expect(task.task_id).toBe("astropy__astropy-12907");
    expect(task.instruction).toBe(row.problem_statement);
    expect(task.FAIL_TO_PASS).toEqual(["astropy/modeling/tests/test_separable.py::test_separable[compound_model6-result6]"]);
    expect(task.PASS_TO_PASS).toEqual([]);
    expect((task as Record<string, unknown>).version).toBe("4.3");
    expect((task as Record<string, unknown>).environment_setup_commit).toBe(row.environment_setup_commit);
  });

  test("malformed rows are reported with line and field; the other rows load", () => {
    const lines = [
      JSON.stringify({ task_id: "good-1", instruction: "fix it", runtime: { prepare: [{ type: "upload_dir", source: "t/repo", path: "/work" }] } }),
      "{not json",
      JSON.stringify({ task_id: "bad-lists", instruction: "x", FAIL_TO_PASS: "not a list" }),
      "",
      JSON.stringify({ instruction: "no id" }),
      JSON.stringify({ task_id: "bad-runtime", instruction: "x", runtime: { prepare: [{ type: "teleport" }] } }),
      JSON.stringify({ task_id: "good-1", instruction: "again" }),
      JSON.stringify({ task_id: "good-2", problem_statement: "works", evaluator: { strategy: "swebench_harness" } }),
    ];
    const { tasks, issues } = parseTaskLines(lines.join("\n"), "/data/tasks");
    expect(tasks.map((t) => t.task_id)).toEqual(["good-1", "good-2"]);
    expect(issues.map((i) => [i.line, i.field])).toEqual([
      [2, ""],
      [3, "FAIL_TO_PASS"],
      [5, "task_id"],
      [6, "runtime.prepare.0.type"],
      [7, "task_id"],
    ]);
    expect(tasks[0]!.runtime!.prepare[0]).toEqual({ type: "upload_dir", source: "/data/tasks/t/repo", path: "/work" });
  });

  test("the bundled task set: at least 16 tasks, half Python, half JavaScript, each complete", async () => {
    const { tasks, issues } = await loadTaskFile(resolve(REPO_ROOT, "tasks/tasks.jsonl"));
    expect(issues).toEqual([]);
    expect(tasks.length).toBeGreaterThanOrEqual(16);
    const languages = tasks.map((t) => t.metadata.language);
    expect(languages.filter((l) => l === "python").length).toBeGreaterThanOrEqual(8);
    expect(languages.filter((l) => l === "javascript").length).toBeGreaterThanOrEqual(8);
    const parsers = new Set(tasks.map((t) => (t.evaluator?.config as { parser: string }).parser));
    expect([...parsers].sort()).toEqual(["pytest", "tap", "unittest"]);
    for (const task of tasks) {
      expect(task.patch).toStartWith("diff --git ");
      expect(task.test_patch).toStartWith("diff --git ");
      expect(task.FAIL_TO_PASS.length).toBeGreaterThan(0);
      expect(task.PASS_TO_PASS.length).toBeGreaterThan(0);
      expect(task.base_commit).toMatch(/^[0-9a-f]{40}$/);
      const upload = task.runtime!.prepare[0]!;
      expect(upload.type === "upload_dir" && upload.source).toBe(resolve(REPO_ROOT, "tasks", task.task_id, "repo"));
    }
  });

  test("tasks/tasks.jsonl is what scripts/build-tasks.ts builds from the task folders", () => {
    const run = Bun.spawnSync(["bun", resolve(REPO_ROOT, "scripts/build-tasks.ts"), "--check"], { stdout: "pipe", stderr: "pipe" });
    expect(run.stderr.toString()).toBe("");
    expect(run.exitCode).toBe(0);
  }, 60_000);
});
