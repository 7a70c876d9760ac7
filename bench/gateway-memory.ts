// Why: the gateway's per-session caches are bounded in bytes (one CacheBudget, `--cache-bytes`),
// not in sessions; this shows it: many sessions each send ~100 KB coding-agent prompts, and the
// gateway's RSS is sampled throughout. The claim measured: peak RSS ≤ budget + a fixed overhead
// (the warm, empty-cache RSS plus what the in-flight requests hold).
//
//   bun bench/gateway-memory.ts [--sessions 1000] [--calls-per-session 2] [--prompt-bytes 100000]
//                               [--concurrency 16] [--cache-bytes 268435456] [--smol]
//
// The mock engine (real tokenizer and template) and the gateway run as separate processes, so
// the RSS is the gateway's alone.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { AdminState } from "../protocol/admin.ts";
import { freePort, rssBytes, waitHealthy } from "./process-helpers.ts";

const { values } = parseArgs({
  options: {
    sessions: { type: "string" },
    "calls-per-session": { type: "string" },
    "prompt-bytes": { type: "string" },
    concurrency: { type: "string" },
    "cache-bytes": { type: "string" },
    /** Run the gateway under `bun --smol` (Bun collects garbage more often). */
    smol: { type: "boolean" },
  },
});
const SESSIONS = Number(values.sessions ?? 1000);
const CALLS = Number(values["calls-per-session"] ?? 2);
const PROMPT_BYTES = Number(values["prompt-bytes"] ?? 100_000);
const CONCURRENCY = Number(values.concurrency ?? 16);
const CACHE_BYTES = Number(values["cache-bytes"] ?? 256 * 1024 * 1024);
const SMOL = values.smol === true;
const ADMIN = "bench-admin-token-0123456789";
const MODEL = "Qwen/Qwen3-8B";
const ROOT = join(import.meta.dir, "..");
const MiB = 1024 * 1024;

/** A ~`bytes` coding-agent conversation unique to `session` (no two sessions share a prefix). */
function firstTurn(session: number, bytes: number): Array<Record<string, unknown>> {
  const line = `    def handle_${session}(self, request):  # route the request to its handler\n        return self.routes[request.path](request)\n`;
  return [
    { role: "system", content: `You are coding agent #${session}. Use the bash tool to inspect and fix the repository.` },
    { role: "user", content: "The test suite fails in server/routes.py; find and fix the bug." },
    { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"server/routes.py"}' } }] },
    { role: "tool", tool_call_id: "call_1", content: line.repeat(Math.max(1, Math.floor((bytes - 600) / line.length))) },
  ];
}

const TOOLS = [
  { type: "function", function: { name: "bash", description: "Run a shell command in the repository.", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } } },
  { type: "function", function: { name: "read_file", description: "Read a file.", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } } },
];

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "polar-bench-memory-"));
  const [enginePort, gatewayPort] = [await freePort(), await freePort()];
  const engineUrl = `http://127.0.0.1:${enginePort}`;
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const engine = Bun.spawn(["bun", "bin/polar.ts", "mock-engine", "--port", String(enginePort)], { cwd: ROOT, stderr: "inherit", stdout: "ignore" });
  const gateway = Bun.spawn(
    ["bun", ...(SMOL ? ["--smol"] : []), "bin/polar.ts", "gateway", "--port", String(gatewayPort), "--engine", engineUrl, "--model", MODEL, "--db", join(dir, "bench.db"), "--admin-token", ADMIN, "--retries", "0", "--cache-bytes", String(CACHE_BYTES)],
    { cwd: ROOT, stderr: "ignore", stdout: "ignore" },
  );
  const admin = (path: string, init: RequestInit = {}) => fetch(`${gatewayUrl}${path}`, { ...init, headers: { authorization: `Bearer ${ADMIN}` } });
  const newSession = async () => ((await (await admin("/v1/sessions", { method: "POST" })).json()) as { token: string }).token;
  const cacheState = async () => AdminState.parse(await (await admin("/v1/admin/state")).json()).cache;

  /** One session's calls: each turn re-sends the conversation so far plus the answer and a new user turn. */
  const runSession = async (session: number) => {
    const key = await newSession();
    const messages = firstTurn(session, PROMPT_BYTES);
    for (let call = 0; call < CALLS; call++) {
      const res = await fetch(`${gatewayUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: MODEL, max_tokens: 32, tools: TOOLS, messages }),
      });
      if (!res.ok) throw new Error(`session ${session} call ${call}: HTTP ${res.status} ${await res.text()}`);
      const answer = ((await res.json()) as { choices: Array<{ message: { content: string | null } }> }).choices[0]!.message.content ?? "";
      messages.push({ role: "assistant", content: answer }, { role: "user", content: `Call ${call} done; go on.` });
    }
  };

  try {
    await waitHealthy(`${engineUrl}/health`);
    await waitHealthy(`${gatewayUrl}/health`);
    // Warm-up (JIT, template, SQLite pages) with a handful of sessions, then the fixed overhead.
    for (let i = 0; i < 4; i++) await runSession(-1 - i);
    await Bun.sleep(500);
    const baseline = rssBytes(gateway.pid);

    let peak = baseline;
    let peakCache = 0;
    /** Peak RSS within each quarter of the sessions: flat quarters mean memory stopped growing with sessions. */
    const quarterPeaks = [0, 0, 0, 0];
    let done = 0;
    const sampler = setInterval(() => {
      const rss = rssBytes(gateway.pid);
      peak = Math.max(peak, rss);
      const quarter = Math.min(3, Math.floor((4 * done) / SESSIONS));
      quarterPeaks[quarter] = Math.max(quarterPeaks[quarter]!, rss);
    }, 100);
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < SESSIONS) {
          const session = next++;
          await runSession(session);
          done++;
          if (session % 50 === 0) peakCache = Math.max(peakCache, (await cacheState()).used_bytes);
        }
      }),
    );
    clearInterval(sampler);
    const seconds = (performance.now() - started) / 1000;
    const final = await cacheState();
    peakCache = Math.max(peakCache, final.used_bytes);
    const end = rssBytes(gateway.pid);
    peak = Math.max(peak, end);

    const mib = (b: number) => (b / MiB).toFixed(0);
    console.log(`machine: ${navigator.hardwareConcurrency} cores, Bun ${Bun.version}; ${SESSIONS} sessions × ${CALLS} calls of ~${PROMPT_BYTES} B prompts, ${CONCURRENCY} concurrent, ${seconds.toFixed(0)} s${SMOL ? ", gateway under bun --smol" : ""}`);
    console.log("| cache budget MiB | warm RSS MiB | peak RSS MiB per quarter of the sessions | peak RSS MiB | end RSS MiB | cache used (estimated) peak MiB | cache entries at end |");
    console.log("|---:|---:|---|---:|---:|---:|---:|");
    console.log(`| ${mib(CACHE_BYTES)} | ${mib(baseline)} | ${quarterPeaks.map(mib).join(" / ")} | ${mib(peak)} | ${mib(end)} | ${mib(peakCache)} | ${final.entries} |`);
  } finally {
    gateway.kill();
    engine.kill();
    await Promise.all([gateway.exited, engine.exited]);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
