// `polar tasks validate` as CI runs it: every bundled task, gold patch → reward 1, unmodified
// repository → reward 0, in the process runtime (bwrap) and in Docker; a broken task fails; a task
// this host cannot evaluate is reported as such, without running it.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { testNeeding } from "../../test/helpers/host-tools.ts";
import { BOOKWORM, dockerForTests } from "../../test/support/runtime/docker-test-env.ts";

const withPytest = testNeeding("pytest");

const ROOT = resolve(import.meta.dir, "../..");
const TASKS = join(ROOT, "tasks/tasks.jsonl");

interface Row {
  task_id: string;
  gold_reward: number | null;
  empty_reward: number | null;
  ok: boolean;
  evaluable: boolean;
  problem: string | null;
}

function validate(file: string, args: string[]): { code: number; rows: Row[]; stderr: string } {
  const run = Bun.spawnSync(["bun", join(ROOT, "bin/polar.ts"), "tasks", "validate", file, "--json", ...args], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
    env: process.env,
  });
  const rows = run.stdout
    .toString()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Row);
  return { code: run.exitCode ?? -1, rows, stderr: run.stderr.toString() };
}

function expectAllValid(result: { code: number; rows: Row[]; stderr: string }): void {
  const taskCount = readFileSync(TASKS, "utf8").split("\n").filter(Boolean).length;
  expect(result.rows.filter((r) => !r.ok)).toEqual([]);
  expect(result.rows.length).toBe(taskCount);
  expect(result.rows.every((r) => r.gold_reward === 1 && r.empty_reward === 0)).toBe(true);
  expect(result.code).toBe(0);
}

const tmp = mkdtempSync(join(tmpdir(), "polar-validate-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("polar tasks validate", () => {
  withPytest(
    "every bundled task in the process runtime (bwrap), the task folder given as in the issue (`tasks/`)",
    () => {
      expectAllValid(validate(join(ROOT, "tasks"), ["--runtime", "process"]));
    },
    900_000,
  );

  test("a task whose gold patch does not fix the bug fails validation and the command exits non-zero", () => {
    const rows = readFileSync(TASKS, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const task = rows.find((r) => r.task_id === "js-leap-year-century")!;
    // The repository upload is relative to the task file; this file lives elsewhere.
    const runtime = task.runtime as { prepare: { type: string; source?: string }[] };
    runtime.prepare = runtime.prepare.map((a) => (a.type === "upload_dir" ? { ...a, source: join(ROOT, "tasks", a.source!) } : a));
    const broken = { ...task, task_id: "broken-gold", patch: task.mock_wrong_patch };
    const file = join(tmp, "broken.jsonl");
    writeFileSync(file, `${JSON.stringify(task)}\n${JSON.stringify(broken)}\n`);
    const result = validate(file, ["--runtime", "process"]);
    expect(result.code).toBe(1);
    // Rows are printed as tasks finish (two at a time), so in any order.
    const rowsById = [...result.rows].sort((a, b) => a.task_id.localeCompare(b.task_id));
    expect(rowsById.map((r) => [r.task_id, r.ok, r.gold_reward, r.empty_reward])).toEqual([
      ["broken-gold", false, 0, 0],
      ["js-leap-year-century", true, 1, 0],
    ]);
    expect(rowsById[0]!.problem).toContain("gold patch gave 0 not 1: unresolved");
  }, 300_000);

  test("a task whose evaluation needs a program this host's sandboxes lack is reported as not evaluable here, and nothing of it runs", () => {
    const rows = readFileSync(TASKS, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const task = rows.find((r) => r.task_id === "py-lru-get-refresh")!;
    // Its tests would run with a PATH that holds only the mounted node: no python3 there.
    const evaluator = { ...(task.evaluator as Record<string, unknown>), env: { PATH: "/polar/node/bin" } };
    const file = join(tmp, "unevaluable.jsonl");
    writeFileSync(file, `${JSON.stringify({ ...task, task_id: "py-no-python", evaluator })}\n`);
    const result = validate(file, ["--runtime", "process"]);
    expect(result.code).toBe(1);
    expect(result.rows).toHaveLength(1);
    const [row] = result.rows;
    expect([row!.ok, row!.evaluable, row!.gold_reward, row!.empty_reward]).toEqual([false, false, null, null]);
    expect(row!.problem).toContain("needs git, python3");
    expect(row!.problem).toContain("python3 is not on the evaluation PATH");
  }, 120_000);
});

const docker = await dockerForTests("polar tasks validate (docker)", [BOOKWORM]);
if (docker) {
  test("polar tasks validate: every bundled task in Docker", () => {
    expectAllValid(validate(TASKS, ["--runtime", "docker"]));
  }, 1_200_000);
}
