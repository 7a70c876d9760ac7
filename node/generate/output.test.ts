// The output folder after what a kill can leave — a torn last line in either file, rows whose
// attempt never reached the ledger — reopens with every attempt once and exactly its rows; a
// folder of another run or one a live process holds is refused.
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GenerateAttempt, GenerateSettings, GeneratedTrace } from "../../protocol/generate.ts";
import { PolarError } from "../../protocol/errors.ts";
import { ATTEMPTS_FILE, GenerateOutput, readRows, SETTINGS_FILE, TRAJECTORIES_FILE } from "./output.ts";

const tmp = mkdtempSync(join(tmpdir(), "polar-genout-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const SETTINGS: GenerateSettings = {
  tasks_file: "/t.jsonl",
  tasks_sha256: "abc",
  harness: "mini",
  model: "m",
  backend: "vllm",
  engine: "mock",
  accept: "reward >= 1",
  dedup: null,
};

function attempt(taskId: string, sample: number, outcome: GenerateAttempt["outcome"], rows: number): GenerateAttempt {
  return {
    task_id: taskId,
    sample_index: sample,
    rollout_id: `ses_${taskId}_${sample}`,
    status: "COMPLETED",
    reward: outcome === "accepted" ? 1 : 0,
    outcome,
    failure_kind: outcome === "accepted" ? null : "rejected",
    duplicate_of: null,
    rows,
    engine_tokens: { prompt: 10, completion: 2 },
    duration_ms: 5,
    finished_at: "2026-01-01T00:00:00.000Z",
  };
}

function row(a: GenerateAttempt, index: number): GeneratedTrace {
  return {
    id: `${a.task_id}/${a.sample_index}/${index}`,
    rollout_id: a.rollout_id,
    task_id: a.task_id,
    sample_index: a.sample_index,
    trace_index: index,
    trace_count: a.rows,
    messages: [
      { role: "user", content: "hi" },
      { role: "assistant", content: `answer ${index}` },
    ],
    tools: [],
    finish_reason: "stop",
    reward: a.reward,
    harness: { name: "mini", version: null },
    model: "m",
    backend: "openai",
    evaluation: null,
    timing: { e2e_ms: 1, run_ms: 1, eval_ms: 1 },
    calls: [0],
    generated_at: a.finished_at,
  };
}

const lines = (path: string) => readFileSync(path, "utf8").split("\n").filter(Boolean);

describe("generate output folder", () => {
  test("a torn ledger line, a torn row and rows of an attempt missing from the ledger are dropped; the rest is kept once", () => {
    const dir = join(tmp, "repair");
    const out = GenerateOutput.open(dir, SETTINGS, () => {});
    const a = attempt("t1", 0, "accepted", 2);
    const b = attempt("t1", 1, "rejected", 0);
    out.record(a, [row(a, 0), row(a, 1)]);
    out.record(b, []);
    out.close();
    // A kill after the rows of t1/2 were written but before its ledger line, in the middle of the next row and the next ledger line:
    const orphan = attempt("t1", 2, "accepted", 1);
    appendFileSync(join(dir, TRAJECTORIES_FILE), `${JSON.stringify(row(orphan, 0))}\n${JSON.stringify(row(orphan, 0)).slice(0, 40)}`);
    appendFileSync(join(dir, ATTEMPTS_FILE), JSON.stringify(orphan).slice(0, 30));

    const seen: string[] = [];
    const again = GenerateOutput.open(dir, SETTINGS, (r) => seen.push(r.id));
    expect(again.attempts.map((x) => `${x.task_id}/${x.sample_index}`)).toEqual(["t1/0", "t1/1"]);
    expect(again.isDone("t1", 0) && again.isDone("t1", 1)).toBe(true);
    expect(again.isDone("t1", 2)).toBe(false);
    expect(seen).toEqual(["t1/0/0", "t1/0/1"]);
    expect(lines(join(dir, ATTEMPTS_FILE))).toHaveLength(2);
    expect(lines(join(dir, TRAJECTORIES_FILE))).toHaveLength(2);
    // The re-run of t1/2 (a new rollout) is recorded once; recording a finished attempt again is refused.
    const rerun = { ...orphan, rollout_id: "ses_rerun" };
    again.record(rerun, [row(rerun, 0)]);
    expect(() => again.record(rerun, [row(rerun, 0)])).toThrow(PolarError);
    again.close();
    expect(existsSync(join(dir, ".lock"))).toBe(false);
  });

  test("rows are read back as written", async () => {
    const rows = await readRows(join(tmp, "repair"));
    expect(rows.map((r) => [r.id, r.rollout_id])).toEqual([
      ["t1/0/0", "ses_t1_0"],
      ["t1/0/1", "ses_t1_0"],
      ["t1/2/0", "ses_rerun"],
    ]);
  });

  test("a folder of a run with other settings is refused, naming them; so is one a live process writes", () => {
    const dir = join(tmp, "settings");
    GenerateOutput.open(dir, SETTINGS, () => {}).close();
    expect(JSON.parse(readFileSync(join(dir, SETTINGS_FILE), "utf8"))).toEqual(SETTINGS);
    let error: unknown;
    try {
      GenerateOutput.open(dir, { ...SETTINGS, harness: "codex", accept: "reward >= 0" }, () => {});
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(PolarError);
    expect((error as PolarError).message).toContain('harness: "mini" there, "codex" now');
    expect((error as PolarError).message).toContain("accept:");
    // The tasks file may move (its content hash is what must match).
    GenerateOutput.open(dir, { ...SETTINGS, tasks_file: "/elsewhere/t.jsonl" }, () => {}).close();

    const held = GenerateOutput.open(dir, SETTINGS, () => {});
    const child = Bun.spawn(["sleep", "30"]);
    try {
      writeFileSync(join(dir, ".lock"), `${child.pid}\n`);
      expect(() => GenerateOutput.open(dir, SETTINGS, () => {})).toThrow(`is being written by process ${child.pid}`);
    } finally {
      child.kill();
      held.close();
    }
  });
});
