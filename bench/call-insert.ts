// Why: the insert of a recorded call runs once per LLM call before its answer leaves the gateway;
// this measures what it costs — CallsRepo.insert of a checkout: shared prefix with recent calls,
// the row, SQLite insert and commit — in CPU per call, and the process's RSS after it, so a
// change of the store's driver is compared in one run against another checkout's.
//
//   bun bench/call-insert.ts [--baseline CHECKOUT] [--rounds 5] [--sessions 32] [--calls 10]
//
// Each checkout runs in a process of its own (so neither sees the other's memory), both at the
// same time. Every round: `--sessions` sessions each make `--calls` calls of a ~100 KB
// coding-agent request whose context grows by a tool turn per call (prompt ids extending the
// previous prompt and its output, as an engine's do), then as many ~1 KB calls; first all
// sessions' calls of a turn together (they share commits, as concurrent calls in the gateway do),
// then one call at a time (a commit per call). CPU is the child's own (process.cpuUsage: all threads).
// Each repo's recent calls share a 64 MiB budget, as in a gateway, so RSS after a round is the
// store's and that bounded cache's, not a cache growing with the sessions of every round.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { RecordedCall } from "../protocol/calls.ts";
import { agentBody } from "./agent-body.ts";

const { values } = parseArgs({
  options: { baseline: { type: "string" }, rounds: { type: "string" }, sessions: { type: "string" }, calls: { type: "string" }, child: { type: "string" } },
});
const ROUNDS = Number(values.rounds ?? 5);
const SESSIONS = Number(values.sessions ?? 32);
const CALLS = Number(values.calls ?? 10);
const MODEL = "Qwen/Qwen3-8B";
const OUTPUT = 32;

interface Repos {
  store: { db: unknown; writer?: unknown; close(): void };
  sessions: { create(metadata: Record<string, unknown>): Promise<{ row: { id: string } }> };
  calls: { insert(call: RecordedCall): Promise<void>; shareCacheBudget(budget: unknown): void };
}

/** The recent calls' byte budget each checkout's repo gets (as a gateway's would; without one only the session count bounds it). */
const CACHE_BYTES = 64 * 1024 * 1024;

/** The checkout's own store modules, as its gateway wires them (the baseline's CallsRepo takes the store's writer connection). */
async function openRepos(root: string, path: string): Promise<Repos> {
  const { openNodeStore } = (await import(join(root, "node/store/db.ts"))) as { openNodeStore(path: string): Promise<Repos["store"]> };
  const { CallsRepo } = (await import(join(root, "node/store/calls-repo.ts"))) as {
    CallsRepo: new (db: unknown, max?: number, writer?: unknown) => Repos["calls"];
  };
  const { SessionsRepo } = (await import(join(root, "node/store/sessions-repo.ts"))) as { SessionsRepo: new (db: unknown) => Repos["sessions"] };
  const { CacheBudget } = (await import(join(root, "node/cache-budget.ts"))) as { CacheBudget: new (bytes: number) => unknown };
  const store = await openNodeStore(path);
  const calls = new CallsRepo(store.db, undefined, store.writer);
  calls.shareCacheBudget(new CacheBudget(CACHE_BYTES));
  return { store, sessions: new SessionsRepo(store.db), calls };
}

/** Call `turn` of a session: the request and the ids a vLLM engine would have returned for it. */
function recorded(sessionId: string, seq: number, bytes: number, turn: number, prompt: number[]): RecordedCall {
  const body = agentBody(MODEL, bytes, false, turn) as {
    messages: RecordedCall["request"]["messages"];
    tools: Array<{ function: { name: string; description: string; parameters: Record<string, unknown> } }>;
  };
  return {
    session_id: sessionId,
    seq,
    dialect: "chat",
    request: { model: MODEL, messages: body.messages, tools: body.tools.map((t) => t.function), sampling: { max_tokens: 256 }, stream: false },
    response: {
      id: `r${seq}`,
      model: MODEL,
      content: "I will run the test suite.",
      tool_calls: [],
      finish_reason: "stop",
      usage: { prompt_tokens: prompt.length, completion_tokens: OUTPUT },
    },
    prompt_ids: prompt,
    output_ids: Array.from({ length: OUTPUT }, (_, i) => 1000 + i),
    logprobs: Array.from({ length: OUTPUT }, (_, i) => -0.125 - i / 1e5),
    engine_url: "http://127.0.0.1:1",
    policy_version: 0,
    timings: { queued_ms: 0.1, engine_ms: 1, total_ms: 1.2 },
    error: null,
    notes: null,
    started_at: new Date(0).toISOString(),
  };
}

/** Child: runs the rounds on the checkout at `root`, printing one JSON line per round. */
async function child(root: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "polar-bench-insert-"));
  const repos = await openRepos(root, join(dir, "calls.db"));
  const cpuMs = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  try {
    for (let round = -1; round < ROUNDS; round++) {
      const out: Record<string, number> = {};
      for (const [label, bytes] of [
        ["100 KB", 100_000],
        ["1 KB", 1_000],
      ] as const) {
        for (const together of [true, false]) {
          const ids = await Promise.all(Array.from({ length: SESSIONS }, async () => (await repos.sessions.create({})).row.id));
          // Each session's prompt: the previous prompt, its output, the new tool turn's ids.
          const prompts = ids.map(() => Array.from({ length: Math.round(bytes / 4) }, (_, i) => (i * 7919 + 13) % 151_000));
          const calls = Array.from({ length: CALLS }, (_, turn) =>
            ids.map((id, s) => {
              const call = recorded(id, turn, bytes, bytes > 10_000 ? turn : 0, prompts[s]!);
              prompts[s] = [...prompts[s]!, ...call.output_ids!, ...Array.from({ length: bytes > 10_000 ? 300 : 0 }, (_, i) => 5000 + turn * 300 + i)];
              return call;
            }),
          );
          Bun.gc(true);
          const before = cpuMs();
          for (const turn of calls) {
            if (together) await Promise.all(turn.map((c) => repos.calls.insert(c)));
            else for (const c of turn) await repos.calls.insert(c);
          }
          out[`${label} ${together ? "together" : "one at a time"}`] = (cpuMs() - before) / (SESSIONS * CALLS);
        }
      }
      Bun.gc(true);
      out.rss = process.memoryUsage().rss / 1048576;
      if (round >= 0) console.log(JSON.stringify(out));
    }
  } finally {
    repos.store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function parent(): Promise<void> {
  const checkouts = [{ name: "this", root: join(import.meta.dir, "..") }, ...(values.baseline ? [{ name: "baseline", root: values.baseline }] : [])];
  const runs = await Promise.all(
    checkouts.map(async (c) => {
      const proc = Bun.spawn(
        ["bun", import.meta.path, "--child", c.root, "--rounds", String(ROUNDS), "--sessions", String(SESSIONS), "--calls", String(CALLS)],
        { stdout: "pipe", stderr: "inherit" },
      );
      const text = await new Response(proc.stdout).text();
      if ((await proc.exited) !== 0) throw new Error(`${c.name}: the child failed`);
      return {
        ...c,
        rounds: text
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as Record<string, number>),
      };
    }),
  );
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    `machine: ${navigator.hardwareConcurrency} cores, Bun ${Bun.version}; ${SESSIONS} sessions × ${CALLS} calls per case and round, ${ROUNDS} rounds; both checkouts at once, each in its own process`,
  );
  console.log("CPU ms per call, median of the rounds [lowest round]:");
  console.log(`| case | ${runs.map((r) => r.name).join(" | ")} |`);
  console.log(`|---|${runs.map(() => "---:|").join("")}`);
  for (const key of Object.keys(runs[0]!.rounds[0]!).filter((k) => k !== "rss")) {
    console.log(
      `| ${key} | ${runs.map((r) => `${median(r.rounds.map((x) => x[key]!)).toFixed(3)} [${Math.min(...r.rounds.map((x) => x[key]!)).toFixed(3)}]`).join(" | ")} |`,
    );
  }
  console.log(`| RSS MiB after each round (GC'd) | ${runs.map((r) => r.rounds.map((x) => x.rss!.toFixed(0)).join(" / ")).join(" | ")} |`);
}

if (values.child) await child(values.child);
else await parent();
