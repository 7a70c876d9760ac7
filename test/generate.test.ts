// `polar generate` end to end on imported Exercism tasks: real sandboxes (process runtime), the
// mini harness, the node's pipeline and evaluator, the mock engine as the endpoint (with token
// ids over its vLLM API; without them through the openai backend) and a Polar gateway's Messages
// API as an Anthropic-compatible endpoint. Checked from the output files: both views where the
// backend returned token ids, the chat view alone (token fields absent) where it did not,
// --accept, --dedup, and a run interrupted twice (SIGKILL, then SIGINT) that resumes with every
// task × sample exactly once and the earlier attempts untouched.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { GenerateAttempt, GenerateSummary, type GeneratedTrace } from "../protocol/generate.ts";
import { runGenerate, type GenerateOptions } from "../node/generate/run.ts";
import { ATTEMPTS_FILE, readRows, SUMMARY_FILE } from "../node/generate/output.ts";
import { startMockEngine } from "../node/mock-engine/index.ts";
import { ENGINE_MODEL, startStack } from "./helpers/stack.ts";

const ROOT = resolve(import.meta.dir, "..");
const TASKS = join(ROOT, "tasks/exercism-python/tasks.jsonl");
const THREE = ["exercism-python-bob", "exercism-python-sieve", "exercism-python-react"];
const TWO = THREE.slice(0, 2);
const RUN_MS = 300_000;
const tmp = mkdtempSync(join(tmpdir(), "polar-generate-test-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function options(out: string, over: Partial<GenerateOptions> = {}): GenerateOptions {
  return {
    tasksFile: TASKS,
    harness: "mini",
    samples: 2,
    engine: "mock",
    backend: "vllm",
    accept: "reward >= 1",
    out: join(tmp, out),
    runtime: "process",
    concurrency: 3,
    dedup: null,
    only: TWO,
    timeoutSeconds: 240,
    mock: { successProbability: 0.5, seed: 0 },
    log: () => {},
    progress: { write: () => {}, tty: false },
    ...over,
  };
}

function ledger(dir: string): GenerateAttempt[] {
  return readFileSync(join(dir, ATTEMPTS_FILE), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => GenerateAttempt.parse(JSON.parse(l)));
}

/** Every task × sample once in the ledger; rows exactly for the accepted attempts; the summary agrees. */
async function expectConsistent(dir: string, taskIds: string[], samples: number): Promise<{ attempts: GenerateAttempt[]; rows: GeneratedTrace[] }> {
  const attempts = ledger(dir);
  const keys = attempts.map((a) => `${a.task_id}/${a.sample_index}`);
  expect(new Set(keys).size).toBe(keys.length);
  expect(keys.sort()).toEqual(taskIds.flatMap((t) => Array.from({ length: samples }, (_, i) => `${t}/${i}`)).sort());
  const rows = await readRows(dir);
  expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
  for (const a of attempts) {
    const own = rows.filter((r) => r.task_id === a.task_id && r.sample_index === a.sample_index);
    expect(own.length).toBe(a.outcome === "accepted" ? a.rows : 0);
    for (const r of own) {
      expect(r.rollout_id).toBe(a.rollout_id);
      expect(r.reward).toBe(a.reward);
      expect(r.trace_count).toBe(a.rows);
    }
  }
  const summary = GenerateSummary.parse(JSON.parse(readFileSync(join(dir, SUMMARY_FILE), "utf8")));
  expect(summary.attempted).toBe(attempts.length);
  expect(summary.accepted).toBe(attempts.filter((a) => a.outcome === "accepted").length);
  expect(summary.rows).toBe(rows.length);
  return { attempts, rows };
}

/** The chat view as SFT frameworks read it: system, the task, assistant / tool turns, an assistant turn last. */
function expectChatView(row: GeneratedTrace): void {
  expect(row.messages[0]!.role).toBe("system");
  expect(row.messages[1]).toMatchObject({ role: "user" });
  expect(row.messages[1]!.content).toContain("## Your task");
  expect(row.messages.at(-1)!.role).toBe("assistant");
  const calls = row.messages.flatMap((m) => m.tool_calls ?? []);
  const results = row.messages.filter((m) => m.role === "tool");
  expect(calls.length).toBeGreaterThan(0);
  expect(results.map((m) => m.tool_call_id)).toEqual(calls.map((c) => c.id));
  expect(row.tools.map((t) => t.function.name)).toContain("bash");
}

describe("polar generate", () => {
  test(
    "vllm backend (token ids): both views on every accepted row, --accept reward >= 1 keeps exactly the resolved attempts",
    async () => {
      const summary = await runGenerate(options("vllm", { samples: 3, only: THREE }));
      const { attempts, rows } = await expectConsistent(join(tmp, "vllm"), THREE, 3);
      expect(summary.attempted).toBe(9);
      for (const a of attempts) {
        expect(a.status).toBe("COMPLETED");
        expect(a.outcome).toBe(a.reward === 1 ? "accepted" : "rejected");
      }
      // Both kinds happened (the mock engine's seeded draw), so the filter had something to filter.
      expect(new Set(attempts.map((a) => a.reward))).toEqual(new Set([0, 1]));
      expect(summary.failures_by_kind).toEqual({ rejected: attempts.filter((a) => a.reward === 0).length });
      for (const row of rows) {
        expectChatView(row);
        expect(row.prompt_ids!.length).toBeGreaterThan(0);
        expect(row.loss_mask!.length).toBe(row.response_ids!.length);
        expect(row.response_logprobs!.length).toBe(row.response_ids!.length);
        expect(row.loss_mask!.includes(1)).toBe(true);
        expect(row.token_count).toBe(row.prompt_ids!.length + row.response_ids!.length);
        expect(row).toMatchObject({ harness: { name: "mini" }, model: ENGINE_MODEL, backend: "vllm", reward: 1, evaluation: { status: "resolved" } });
        expect(row.evaluation!.fail_to_pass!.passed).toBe(row.evaluation!.fail_to_pass!.total);
        expect(row.timing.e2e_ms).toBeGreaterThan(0);
      }
      expect(summary.tokens_per_accepted_trajectory).toBe(rows.reduce((n, r) => n + r.token_count!, 0) / summary.accepted);
    },
    RUN_MS,
  );

  test(
    "--accept 'reward < 1 && turns >= 3': the other attempts, and only those",
    async () => {
      await runGenerate(options("inverse", { accept: "reward < 1 && turns >= 3" }));
      const { attempts, rows } = await expectConsistent(join(tmp, "inverse"), TWO, 2);
      for (const a of attempts) expect(a.outcome).toBe(a.reward === 0 ? "accepted" : "rejected");
      for (const r of rows) expect(r.reward).toBe(0);
    },
    RUN_MS,
  );

  test(
    "openai backend against an OpenAI-compatible server that returns no token ids: the chat view, token fields absent (not zeros); the model found from /v1/models",
    async () => {
      const engine = await startMockEngine({ port: 0, tasks: TASKS, successProbability: 1 });
      try {
        const summary = await runGenerate(options("openai", { engine: engine.url, backend: "openai" }));
        const { rows } = await expectConsistent(join(tmp, "openai"), TWO, 2);
        expect(summary.accepted).toBe(4);
        for (const row of rows) {
          expectChatView(row);
          for (const field of ["prompt_ids", "response_ids", "loss_mask", "response_logprobs"]) expect(field in row).toBe(false);
          expect(row).toMatchObject({ backend: "openai", model: ENGINE_MODEL });
          expect(row.token_count).toBeGreaterThan(0);
        }
        expect(engine.requests).toContain("POST /v1/chat/completions");
      } finally {
        await engine.stop();
      }
    },
    RUN_MS,
  );

  test(
    "anthropic backend against an Anthropic-compatible server (a Polar gateway's Messages API): the chat view, text only",
    async () => {
      const stack = await startStack({ engine: { tasks: TASKS, successProbability: 1 } });
      try {
        const session = await stack.session();
        const summary = await runGenerate(
          options("anthropic", { engine: stack.gateway.url, backend: "anthropic", apiKey: session.token, model: ENGINE_MODEL, maxTokensCap: 4096 }),
        );
        const { rows } = await expectConsistent(join(tmp, "anthropic"), TWO, 2);
        expect(summary.accepted).toBe(4);
        for (const row of rows) {
          expectChatView(row);
          expect("prompt_ids" in row).toBe(false);
          expect(row.backend).toBe("anthropic");
        }
        const served = await stack.calls(session.id);
        expect(served.length).toBeGreaterThan(0);
        expect(new Set(served.map((c) => c.dialect))).toEqual(new Set(["anthropic"]));
      } finally {
        await stack.stop();
      }
    },
    RUN_MS,
  );

  test(
    "--dedup: samples that played the same trajectory keep one per task, the others marked duplicate of it",
    async () => {
      const summary = await runGenerate(options("dedup", { samples: 3, dedup: 0.9, mock: { successProbability: 1, seed: 0 } }));
      const { attempts } = await expectConsistent(join(tmp, "dedup"), TWO, 3);
      for (const task of TWO) {
        const mine = attempts.filter((a) => a.task_id === task);
        const kept = mine.filter((a) => a.outcome === "accepted");
        expect(kept).toHaveLength(1);
        for (const d of mine.filter((a) => a.outcome === "duplicate")) expect(d.duplicate_of).toBe(kept[0]!.sample_index);
        expect(mine.filter((a) => a.outcome === "duplicate")).toHaveLength(2);
      }
      expect(summary.failures_by_kind).toEqual({ duplicate: 4 });
    },
    RUN_MS,
  );
});

describe("polar generate interrupted and resumed", () => {
  const out = join(tmp, "resume");
  const args = [
    "generate",
    "--tasks",
    TASKS,
    "--only",
    THREE.join(","),
    "--samples",
    "3",
    "--concurrency",
    "1",
    "--out",
    out,
    "--mock-success-probability",
    "0.5",
  ];

  /** Starts `polar generate`, waits until the ledger has more than `after` lines, sends `signal`. */
  async function interrupt(after: number, signal: "SIGKILL" | "SIGINT"): Promise<{ code: number; stdout: string }> {
    const proc = Bun.spawn(["bun", join(ROOT, "bin/polar.ts"), ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    const stdout = new Response(proc.stdout).text();
    void new Response(proc.stderr).text();
    const count = () => (existsSync(join(out, ATTEMPTS_FILE)) ? readFileSync(join(out, ATTEMPTS_FILE), "utf8").split("\n").filter(Boolean).length : 0);
    while (count() <= after && proc.exitCode === null) await Bun.sleep(100);
    proc.kill(signal);
    return { code: await proc.exited, stdout: await stdout };
  }

  test("SIGKILL mid-run, SIGINT mid-run, then a resume: every task × sample once, earlier attempts kept as they were", async () => {
    const killed = await interrupt(0, "SIGKILL");
    expect(killed.code).not.toBe(0);
    const afterKill = ledger(out);
    expect(afterKill.length).toBeGreaterThan(0);

    const stopped = await interrupt(afterKill.length, "SIGINT");
    const afterStop = ledger(out);
    // SIGINT stops cleanly: exit 130, the summary says what was not run, running rollouts were cancelled and not recorded.
    expect(afterStop.length).toBeLessThan(9);
    expect(stopped.code).toBe(130);
    expect(stopped.stdout).toContain("not run");
    expect(afterStop.slice(0, afterKill.length)).toEqual(afterKill);

    const summary = await runGenerate(options("resume", { samples: 3, only: THREE, concurrency: 1 }));
    const { attempts } = await expectConsistent(out, THREE, 3);
    expect(attempts.slice(0, afterStop.length)).toEqual(afterStop);
    expect(summary.resumed_attempts).toBe(afterStop.length);
    expect(summary.remaining).toBe(0);
    expect(attempts.filter((a) => a.outcome === "failed")).toEqual([]);

    // Nothing left: a further run starts no rollout and changes nothing.
    const again = await runGenerate(options("resume", { samples: 3, only: THREE, concurrency: 1 }));
    expect(again.attempted).toBe(9);
    expect(ledger(out)).toEqual(attempts);
  }, 900_000);

  test("a resume with other settings is refused", async () => {
    await expect(runGenerate(options("resume", { samples: 3, only: THREE, accept: "reward >= 0" }))).rejects.toThrow("holds a run with other settings");
  }, 60_000);
});
