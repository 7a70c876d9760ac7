// Why: bench/gateway-cpu.ts says what a call costs in all; this says which step costs what, by
// running each step of the call path in-process on the same ~100 KB and ~1 KB requests and the
// same fake vLLM answer, with the gateway's own modules (HTTP in and out is the pass-through's
// figure in gateway-cpu.ts).
//
//   bun bench/gateway-steps.ts [--iterations 400]
//
// CPU time per step from process.cpuUsage() (the process's threads, so GC work is included).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { EngineClient } from "../node/gateway/backends/engine-client.ts";
import { VllmBackend } from "../node/gateway/backends/vllm.ts";
import { chatDialect } from "../node/gateway/dialects/index.ts";
import { CallsRepo, type CallRecord } from "../node/store/calls-repo.ts";
import { openNodeStore } from "../node/store/db.ts";
import { SessionsRepo } from "../node/store/sessions-repo.ts";
import { agentBody } from "./agent-body.ts";
import { vllmAnswer } from "./fake-vllm-answer.ts";
import { PromptIdsJson } from "../node/gateway/backends/prompt-ids-json.ts";
import { CacheBudget } from "../node/cache-budget.ts";

const { values } = parseArgs({ options: { iterations: { type: "string" } } });
const ITERATIONS = Number(values.iterations ?? 400);
const MODEL = "Qwen/Qwen3-8B";

/** CPU ms per run of `step`, after a warm-up. */
async function cpuMs(step: (i: number) => unknown): Promise<number> {
  for (let i = 0; i < 50; i++) await step(-1 - i);
  const before = process.cpuUsage();
  for (let i = 0; i < ITERATIONS; i++) await step(i);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / ITERATIONS;
}

/** A vLLM backend whose engine call answers `answer` at once: what remains is the backend's own work. */
function backendAnswering(answer: string, parseAnswer: boolean): VllmBackend {
  const parsed = JSON.parse(answer) as unknown;
  const client = {
    request: async (req: { json?: string; schema: { parse(v: unknown): unknown } }) => ({
      data: req.schema.parse(parseAnswer ? JSON.parse(answer) : parsed),
      engineUrl: "http://127.0.0.1:1",
      attempts: 1,
    }),
    pool: { forget: () => {} },
  } as unknown as EngineClient;
  return new VllmBackend(client, MODEL);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "polar-bench-steps-"));
  const store = await openNodeStore(join(dir, "steps.db"));
  console.log(`in-process CPU ms per step (${ITERATIONS} iterations after a warm-up); Bun ${Bun.version}; ${navigator.hardwareConcurrency} cores`);
  console.log("| step | ~100 KB request | ~1 KB request |");
  console.log("|---|---:|---:|");
  const rows = new Map<string, number[]>();
  const add = (name: string, ms: number) => rows.set(name, [...(rows.get(name) ?? []), ms]);
  try {
    for (const size of [100_000, 1_000]) {
      const text = JSON.stringify(agentBody(MODEL, size, false));
      const answer = vllmAnswer(Math.round(text.length / 4));
      const request = chatDialect.parseRequest(JSON.parse(text));
      add("request body: JSON.parse", await cpuMs(() => JSON.parse(text)));
      add(
        "request: Chat schema (zod) + pivot",
        (await cpuMs(() => chatDialect.parseRequest(JSON.parse(text)))) - (rows.get("request body: JSON.parse")!.at(-1) ?? 0),
      );
      const signal = new AbortController().signal;
      const repeat = backendAnswering(answer, false);
      add(
        "vllm backend, session's repeat call: engine body (messages' JSON reused) + answer schema + pivot",
        await cpuMs(() => repeat.complete({ request, sessionId: "s", signal })),
      );
      const fresh = backendAnswering(answer, false);
      add(
        "vllm backend, a session's first call: engine body (all JSON.stringify) + answer schema + pivot",
        await cpuMs((i) => fresh.complete({ request, sessionId: `s${i}`, signal })),
      );
      add("engine answer: JSON.parse", await cpuMs(() => JSON.parse(answer)));
      // As the gateway parses it: the answer's prompt extends the session's previous one by 40 ids
      // (each run its own session, whose previous answer was parsed beforehand).
      const answers = new PromptIdsJson((a) => a);
      answers.shareCacheBudget(new CacheBudget(2 ** 32));
      const bytes = Buffer.from(answer);
      for (let i = -50; i < ITERATIONS; i++) answers.parse(`s${i}`, bytes);
      const extended = Buffer.from(vllmAnswer(Math.round(text.length / 4) + 40));
      add("engine answer: PromptIdsJson (prompt extends the previous by 40 ids)", await cpuMs((i) => answers.parse(`s${i}`, extended)));
      const result = await repeat.complete({ request, sessionId: "s", signal });
      add("response: render + JSON.stringify", await cpuMs(() => JSON.stringify(chatDialect.renderResponse(result.response, request))));
      const { row } = await new SessionsRepo(store.db).create({});
      const calls = new CallsRepo(store.db);
      let seq = 0;
      const recorded = (): CallRecord => ({
        session_id: row.id,
        seq: seq++,
        dialect: "chat",
        request,
        response: result.response,
        prompt_ids: result.tokens!.promptIds,
        output_ids: result.tokens!.outputIds,
        logprobs: result.tokens!.logprobs,
        engine_url: result.engineUrl,
        policy_version: 0,
        timings: { queued_ms: 0.1, engine_ms: 1, total_ms: 1.2 },
        error: null,
        notes: null,
        started_at: new Date().toISOString(),
      });
      add("store: shared prefix + row + SQLite insert and commit (one call at a time)", await cpuMs(() => calls.insert(recorded())));
    }
    for (const [name, [big, small]] of rows) console.log(`| ${name} | ${big!.toFixed(3)} | ${small!.toFixed(3)} |`);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
