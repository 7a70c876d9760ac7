// Why: `polar demo` — the embedded default that runs anywhere with only Bun: the mock engine
// (real Qwen3 tokenizer and template), a gateway with a SQLite file, and a real agent harness
// doing a two-turn tool loop through it; then it prints what was recorded, token for token.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionCalls, type RecordedCall } from "../../protocol/calls.ts";
import { type FlagSpecs, UsageError, parseFlags, stringFlag } from "../cli/args.ts";
import { createBackend } from "../gateway/backends/index.ts";
import { startGateway } from "../gateway/server.ts";
import { HARNESS_KINDS, getHarness, isHarnessKind, runOnHost, type HarnessKind } from "../harness/index.ts";
import { startMockEngine } from "../mock-engine/index.ts";
import type { TrajectoryResult } from "../trajectory/index.ts";

const FLAGS: FlagSpecs = {
  harness: { type: "string", help: "harness to run: mini needs only Bun; codex, claude-code, qwen-code and pi need scripts/install-harnesses.sh", default: "mini" },
  db: { type: "string", help: "keep the recorded calls in this SQLite file (default: a temp file, removed)" },
  json: { type: "boolean", help: "print the recorded calls as JSON instead of a table" },
};

const INSTRUCTION = "Create a file named out.txt containing the word hello, then say you are done.";
const ADMIN_TOKEN = "demo-admin-token-not-secret";
/** Every harness but `command`, which needs a program of the user's. */
const DEMO_HARNESSES = HARNESS_KINDS.filter((k) => k !== "command");

export async function runDemoCli(argv: string[]): Promise<void> {
  const flags = parseFlags("demo", "mock engine + gateway + one agent rollout, then the recorded calls", FLAGS, argv);
  if (!flags) return;
  const harness = stringFlag(flags, "harness") ?? "mini";
  if (!isHarnessKind(harness) || harness === "command") throw new UsageError(`--harness must be one of ${DEMO_HARNESSES.join(", ")}`);

  const dir = mkdtempSync(join(tmpdir(), "polar-demo-"));
  const engine = await startMockEngine({ port: 0 });
  try {
    const gateway = await startGateway(
      { port: 0, db: stringFlag(flags, "db") ?? join(dir, "demo.db"), adminToken: ADMIN_TOKEN },
      createBackend("vllm", { urls: [engine.url] }),
    );
    try {
      await runDemo(gateway.url, engine.url, harness, dir, flags.json === true);
    } finally {
      await gateway.stop();
    }
  } finally {
    await engine.stop();
    if (!stringFlag(flags, "db")) rmSync(dir, { recursive: true, force: true });
  }
}

async function runDemo(gatewayUrl: string, engineUrl: string, harness: HarnessKind, dir: string, json: boolean): Promise<void> {
  const admin = async <T>(path: string, init: RequestInit = {}): Promise<T> => {
    const res = await fetch(`${gatewayUrl}${path}`, { ...init, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    if (!res.ok) throw new Error(`${init.method ?? "GET"} ${path}: HTTP ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const session = await admin<{ id: string; token: string; openai_base_url: string; anthropic_base_url: string }>("/v1/sessions", {
    method: "POST",
    body: JSON.stringify({ metadata: { demo: true, harness } }),
  });
  log(`mock engine ${engineUrl} · gateway ${gatewayUrl} · session ${session.id} · harness ${harness}`);

  const workDir = join(dir, "work");
  mkdirSync(workDir);
  const result = await runOnHost(getHarness(harness), {
    workDir,
    homeDir: join(dir, "home"),
    gateway: { openaiBaseUrl: session.openai_base_url, anthropicBaseUrl: session.anthropic_base_url, token: session.token },
    model: "Qwen/Qwen3-8B",
    instruction: INSTRUCTION,
    limits: { timeoutMs: 120_000, maxTurns: 8 },
  });
  log(`harness exited ${result.exitCode} in ${Math.round(result.durationMs)} ms; final answer: ${JSON.stringify(result.finalOutput.trim())}`);
  log(`out.txt: ${readOptional(join(workDir, "out.txt"))}`);

  const { calls } = SessionCalls.parse(await admin<unknown>(`/v1/sessions/${session.id}/calls`));
  if (json) console.log(JSON.stringify(calls, null, 2));
  else printCalls(calls);
  const { traces } = await admin<TrajectoryResult>(`/v1/sessions/${session.id}/trajectory?strategy=template-aware`);
  log(`trajectory (template-aware): ${traces.length} trace(s); ${traces.map((t) => `${t.prompt_ids.length} prompt + ${t.response_ids.length} response tokens, ${t.loss_mask.filter((m) => m === 1).length} trainable`).join("; ")}`);
  if (result.exitCode !== 0) throw new Error(`the ${harness} harness failed: ${result.error ?? result.stderr.slice(-2000)}`);
}

function printCalls(calls: RecordedCall[]): void {
  console.log("\nseq  dialect  prompt_ids  sampled_ids  mean_logprob  finish      tool calls / text");
  for (const c of calls) {
    const mean = c.logprobs?.length ? (c.logprobs.reduce((a, b) => a + b, 0) / c.logprobs.length).toFixed(3) : "-";
    const what = c.error ? `error ${c.error.code}` : c.response?.tool_calls.length ? c.response.tool_calls.map((t) => `${t.name}(${t.arguments})`).join(" ") : JSON.stringify(c.response?.content ?? "");
    console.log(`${String(c.seq).padEnd(4)} ${c.dialect.padEnd(8)} ${String(c.prompt_ids?.length ?? "-").padEnd(11)} ${String(c.output_ids?.length ?? "-").padEnd(12)} ${mean.padEnd(13)} ${String(c.response?.finish_reason ?? "-").padEnd(11)} ${what}`);
  }
  const last = calls.at(-1);
  if (last?.output_ids) console.log(`\nlast call's sampled ids: [${last.output_ids.join(", ")}]\n`);
}

function readOptional(path: string): string {
  try {
    return JSON.stringify(readFileSync(path, "utf8"));
  } catch {
    return "(missing)";
  }
}

function log(line: string): void {
  console.log(`polar demo: ${line}`);
}
