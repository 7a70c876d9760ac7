// Why: `polar demo` — the embedded default that runs anywhere with only Bun: the mock engine
// (real Qwen3 tokenizer and template), a gateway with a SQLite file, and a real agent harness
// doing a two-turn tool loop through it; then it prints what was recorded, token for token.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RecordedCall } from "../../protocol/calls.ts";
import { type FlagSpecs, UsageError, parseFlags, stringFlag } from "../cli/args.ts";
import { createBackend } from "../gateway/backends/index.ts";
import { startGateway } from "../gateway/server.ts";
import { getHarness, isHarnessKind, runOnHost } from "../harness/index.ts";
import { startMockEngine } from "../mock-engine/index.ts";
import type { TrajectoryResult } from "../trajectory/index.ts";

const FLAGS: FlagSpecs = {
  harness: { type: "string", help: "harness to run (mini needs only Bun; the CLIs need scripts/install-harnesses.sh)", default: "mini" },
  db: { type: "string", help: "keep the recorded calls in this SQLite file (default: a temp file, removed)" },
  json: { type: "boolean", help: "print the recorded calls as JSON instead of a table" },
};

const INSTRUCTION = "Create a file named out.txt containing the word hello, then say you are done.";
const ADMIN_TOKEN = "demo-admin-token-not-secret";

export async function runDemoCli(argv: string[]): Promise<void> {
  const flags = parseFlags("demo", "mock engine + gateway + one agent rollout, then the recorded calls", FLAGS, argv);
  if (!flags) return;
  const harness = stringFlag(flags, "harness") ?? "mini";
  if (!isHarnessKind(harness) || harness === "command") throw new UsageError(`--harness must be one of codex, claude-code, qwen-code, pi, mini`);

  const dir = mkdtempSync(join(tmpdir(), "polar-demo-"));
  const engine = await startMockEngine({ port: 0 });
  const gateway = await startGateway(
    { port: 0, db: stringFlag(flags, "db") ?? join(dir, "demo.db"), adminToken: ADMIN_TOKEN },
    createBackend("vllm", { urls: [engine.url] }),
  );
  try {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const session = (await (await fetch(`${gateway.url}/v1/sessions`, { method: "POST", headers: admin, body: JSON.stringify({ metadata: { demo: true, harness } }) })).json()) as {
      id: string;
      token: string;
      openai_base_url: string;
      anthropic_base_url: string;
    };
    log(`mock engine ${engine.url} · gateway ${gateway.url} · session ${session.id} · harness ${harness}`);

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

    const calls = ((await (await fetch(`${gateway.url}/v1/sessions/${session.id}/calls`, { headers: admin })).json()) as { calls: RecordedCall[] }).calls;
    if (flags.json) console.log(JSON.stringify(calls, null, 2));
    else printCalls(calls);
    const { traces } = (await (await fetch(`${gateway.url}/v1/sessions/${session.id}/trajectory?strategy=template-aware`, { headers: admin })).json()) as TrajectoryResult;
    log(`trajectory (template-aware): ${traces.length} trace(s); ${traces.map((t) => `${t.prompt_ids.length} prompt + ${t.response_ids.length} response tokens, ${t.loss_mask.filter((m) => m === 1).length} trainable`).join("; ")}`);
    if (result.exitCode !== 0) throw new Error(`the ${harness} harness failed: ${result.error ?? result.stderr.slice(-2000)}`);
  } finally {
    await gateway.stop();
    await engine.stop();
    if (!stringFlag(flags, "db")) rmSync(dir, { recursive: true, force: true });
  }
}

function printCalls(calls: RecordedCall[]): void {
  console.log("\nseq  dialect  prompt_ids  sampled_ids  mean_logprob  finish      tool calls / text");
  for (const c of calls) {
    const mean = c.logprobs?.length ? (c.logprobs.reduce((a, b) => a + b, 0) / c.logprobs.length).toFixed(3) : "-";
    const what = c.error ? `error ${c.error.code}` : c.response?.toolCalls.length ? c.response.toolCalls.map((t) => `${t.name}(${t.arguments})`).join(" ") : JSON.stringify(c.response?.content ?? "");
    console.log(`${String(c.seq).padEnd(4)} ${c.dialect.padEnd(8)} ${String(c.promptIds?.length ?? "-").padEnd(11)} ${String(c.outputIds?.length ?? "-").padEnd(12)} ${mean.padEnd(13)} ${String(c.response?.finishReason ?? "-").padEnd(11)} ${what}`);
  }
  const last = calls.at(-1);
  if (last?.outputIds) console.log(`\nlast call's sampled ids: [${last.outputIds.join(", ")}]\n`);
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
