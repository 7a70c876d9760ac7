// Why: trajectory rebuilding decides how many tokens a trainer must process and how faithful
// they are; this ablation compares the four strategies on multi-turn sessions recorded through
// the real gateway (→ vllm backend → mock engine with the real Qwen3 template): synthetic
// sessions from a small OpenAI-SDK agent loop, and sessions of the REAL harness CLIs (Pi, Qwen
// Code, Codex, Claude Code; 24 shell steps, thinking on and off; Codex, Qwen Code and Claude Code
// each compacting once inside its query; Pi with a second query and Pi compacting between two
// queries); the committed real-CLI fixtures (test/fixtures/trajectories/); and it times rebuilding at 10, 100 and 1,000 calls to show it is linear.
//
//   bun bench/trajectories.ts [--repeat 5] [--only fixtures|synthetic|real|timing]
//
// "exact context" counts the calls whose prompt ids equal the trace's tokens before their sampled
// span; "context drift" sums, over the calls, the tokens of both past their common prefix.
//
// Prints markdown for the "Trajectories" section of bench/RESULTS.md.
import OpenAI from "openai";
import { parseArgs } from "node:util";
import type { RecordedCall } from "../protocol/calls.ts";
import { STRATEGIES, type SessionTrajectoryStats, type Strategy } from "../protocol/trace.ts";
import { rebuild } from "../node/trajectory/index.ts";
import { GatewayAgent, loopScript, type GatewayAgentOptions } from "../test/support/trajectory/gateway-agent.ts";
import { qwen3Tokenizer } from "../test/support/trajectory/qwen3.ts";
import { startStack, type Stack } from "../test/helpers/stack.ts";
import { recordRealCliSessions } from "../test/helpers/real-cli-scenarios.ts";
import { allTrajectoryFixtures } from "../test/helpers/trajectory-fixtures.ts";

const { values } = parseArgs({ options: { repeat: { type: "string" }, only: { type: "string" } } });
const REPEAT = Number(values.repeat ?? 5);
const ONLY = values.only;
const TOOL_TURNS = 7;
const REAL_CLI_TURNS = 24;
const tokenizer = qwen3Tokenizer();

const MAIN_SYSTEM = "You are a coding agent working in a TypeScript repository. Use bash to inspect files.";
const SUB_SYSTEM = "You are a file-search sub-agent. Report matching paths only.";
const billing = (n: number) => `x-anthropic-billing-header: cc_version=2.0.${n}.c3d; cch=${(n * 7919) % 10007};\n`;

async function client(stack: Stack): Promise<{ id: string; client: OpenAI }> {
  const session = await stack.session();
  return { id: session.id, client: new OpenAI({ baseURL: session.openai_base_url, apiKey: session.token, maxRetries: 0 }) };
}

/**
 * 32 calls: query 1 (8 calls), query 2 (8) with a sub-agent (8) interleaved, a compaction into
 * a summary, then query 3 (8). Main conversation: 24 turns.
 */
async function recordMixedSession(stack: Stack, agentOpts: Omit<GatewayAgentOptions, "system">, volatile: boolean): Promise<RecordedCall[]> {
  const { id, client: c } = await client(stack);
  const system = (text: string) => (volatile ? (n: number) => `${billing(n)}${text}` : text);
  const main = new GatewayAgent(c, { ...agentOpts, system: system(MAIN_SYSTEM) });
  await main.solve("Query 1: find why the build fails.");
  const sub = new GatewayAgent(c, { ...agentOpts, system: system(SUB_SYSTEM) }).ask("Find every tsconfig file.");
  main.ask("Query 2: fix it.");
  let mainDone = false;
  let subDone = false;
  while (!mainDone || !subDone) {
    if (!mainDone) mainDone = await main.step();
    if (!subDone) subDone = await sub.step();
  }
  const compacted = new GatewayAgent(c, {
    ...agentOpts,
    system: system(MAIN_SYSTEM),
    history: [{ role: "user", content: "Summary of the conversation so far: the build failed on a missing path alias; it is fixed." }],
  });
  await compacted.solve("Query 3: add a regression test.");
  return stack.calls(id);
}

/** `calls` calls of a thinking-off tool loop, compacted every 50 calls (bounded context). */
async function recordLongSession(stack: Stack, calls: number): Promise<RecordedCall[]> {
  const { id, client: c } = await client(stack);
  let made = 0;
  for (let block = 0; made < calls; block++) {
    const history = block === 0 ? [] : [{ role: "user" as const, content: `Summary of blocks 0..${block - 1}: work in progress.` }];
    const agent = new GatewayAgent(c, { system: MAIN_SYSTEM, thinking: false, history }).ask(`Block ${block}: continue.`);
    for (let done = false; !done && made < calls; made++) done = await agent.step();
  }
  return stack.calls(id);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function timed(calls: RecordedCall[], strategy: Strategy): { stats: SessionTrajectoryStats; ms: number } {
  rebuild(calls, strategy, { tokenizer }); // warm-up (JIT), not timed
  const runs = Array.from({ length: REPEAT }, () => rebuild(calls, strategy, { tokenizer }));
  return { stats: runs[0]!.stats, ms: median(runs.map((r) => r.stats.rebuild_ms)) };
}

const recordedTokens = (calls: RecordedCall[]) => calls.reduce((n, c) => n + (c.prompt_ids?.length ?? 0) + (c.output_ids?.length ?? 0), 0);
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const nonZero = (counts: Record<string, number>) =>
  Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(", ") || "—";

function printTableHeader(): void {
  console.log(
    "| strategy | traces | tokens to process | trainable | exactly sampled | logprob coverage | exact context (calls) | context drift (tokens) | splits (cause) | normalisations | rebuild ms |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|");
}

function printStrategyRows(calls: RecordedCall[]): Map<Strategy, SessionTrajectoryStats> {
  const byStrategy = new Map<Strategy, SessionTrajectoryStats>();
  for (const strategy of STRATEGIES) {
    const { stats, ms } = timed(calls, strategy);
    byStrategy.set(strategy, stats);
    console.log(
      `| ${strategy} | ${stats.trace_count} | ${stats.total_tokens.toLocaleString("en")} | ${stats.trainable_tokens.toLocaleString("en")} | ${pct(stats.trainable_exactly_sampled / Math.max(1, stats.trainable_tokens))} | ${pct(stats.logprob_coverage)} | ${stats.context_exact_calls}/${stats.calls_used} | ${stats.context_drift_tokens.toLocaleString("en")} | ${nonZero(stats.split_counts)} | ${nonZero(stats.normalisations)} | ${ms.toFixed(1)} |`,
    );
  }
  return byStrategy;
}

/** Over a set of sessions: how many calls template-aware merged, and how many of those saw the trace's context. */
function printContextSummary(title: string, sessions: Map<Strategy, SessionTrajectoryStats>[]): void {
  const aware = sessions.map((s) => s.get("template-aware")!);
  // A call that opens a trace always has an exact context; merged calls are the others.
  const merged = aware.reduce((n, s) => n + s.calls_used - s.trace_count, 0);
  const mergedExact = aware.reduce((n, s) => n + s.context_exact_calls - s.trace_count, 0);
  const drift = aware.reduce((n, s) => n + s.context_drift_tokens, 0);
  console.log(
    `\n${title}: template-aware merged ${merged} calls into earlier traces; ${merged - mergedExact} of them were sampled from a context other than the trace's (${drift.toLocaleString("en")} drift tokens in all).`,
  );
}

async function syntheticSessions(): Promise<void> {
  const stack = await startStack({ engine: { script: loopScript(3, TOOL_TURNS) } });
  try {
    const sessions: [string, RecordedCall[]][] = [
      ["thinking on, reasoning dropped by the harness", await recordMixedSession(stack, { thinking: true }, false)],
      ["thinking off", await recordMixedSession(stack, { thinking: false }, false)],
      ["thinking on, reasoning echoed, per-call billing header", await recordMixedSession(stack, { thinking: true, keepReasoning: true }, true)],
    ];
    for (const [name, calls] of sessions) {
      console.log(`\n#### ${name} — ${calls.length} calls, ${recordedTokens(calls).toLocaleString("en")} recorded tokens\n`);
      printTableHeader();
      printStrategyRows(calls);
    }
  } finally {
    await stack.stop();
  }
}

/** Sessions of the real CLIs, recorded now (each run takes seconds). */
async function realCliSessions(): Promise<void> {
  const sessions = await recordRealCliSessions(REAL_CLI_TURNS, (line) => console.error(line));
  const all: Map<Strategy, SessionTrajectoryStats>[] = [];
  for (const { name, calls, runMs } of sessions) {
    console.log(
      `\n#### REAL CLI: ${name} — ${calls.length} calls, ${recordedTokens(calls).toLocaleString("en")} recorded tokens, CLI run ${(runMs / 1000).toFixed(1)} s\n`,
    );
    printTableHeader();
    all.push(printStrategyRows(calls));
  }
  printContextSummary("All real-CLI sessions", all);
}

/** The committed real-CLI fixture sessions (test/fixtures/trajectories/): no CLI needed. */
function fixtureSessions(): void {
  const all: Map<Strategy, SessionTrajectoryStats>[] = [];
  for (const { name, description, calls } of allTrajectoryFixtures()) {
    console.log(`\n#### FIXTURE ${name}: ${description}, ${recordedTokens(calls).toLocaleString("en")} recorded tokens\n`);
    printTableHeader();
    all.push(printStrategyRows(calls));
  }
  printContextSummary("All fixtures", all);
}

async function linearity(): Promise<void> {
  // One conversation of 49 tool calls and an answer per block; the harness compacts between blocks.
  const longStack = await startStack({ engine: { script: loopScript(1, 49) } });
  try {
    console.log("\n#### Rebuild time vs session size (thinking off, compaction every 50 calls)\n");
    console.log("| calls | recorded tokens | " + STRATEGIES.map((s) => `${s} ms (µs/1k tok)`).join(" | ") + " |");
    console.log("|---:|---:|" + STRATEGIES.map(() => "---:").join("|") + "|");
    for (const size of [10, 100, 1000]) {
      const calls = await recordLongSession(longStack, size);
      const tokens = recordedTokens(calls);
      const cells = STRATEGIES.map((strategy) => {
        const { ms } = timed(calls, strategy);
        return `${ms.toFixed(1)} (${((ms * 1000) / (tokens / 1000)).toFixed(1)})`;
      });
      console.log(`| ${calls.length} | ${tokens.toLocaleString("en")} | ${cells.join(" | ")} |`);
    }
  } finally {
    await longStack.stop();
  }
}

if (!ONLY || ONLY === "fixtures") fixtureSessions();
if (!ONLY || ONLY === "synthetic") await syntheticSessions();
if (!ONLY || ONLY === "real") await realCliSessions();
if (!ONLY || ONLY === "timing") await linearity();
