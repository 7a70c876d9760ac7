// Why: the gateway's per-session caches are bounded in bytes (one CacheBudget, `--cache-bytes`),
// not in sessions; this shows it: many sessions each send ~100 KB coding-agent prompts, and the
// gateway's RSS is sampled throughout. The claim measured: peak RSS ≤ budget + a fixed overhead
// (the warm, empty-cache RSS plus what the in-flight requests hold).
//
//   bun bench/gateway-memory.ts [--sessions 1000] [--calls-per-session 2] [--prompt-bytes 100000]
//                               [--concurrency 16] [--cache-bytes N] [--smol]
//                               [--baseline CHECKOUT] [--variant NAME:SETTING,…]…
//
// The mock engine (real tokenizer and template) and the gateway run as separate processes, so
// the RSS is the gateway's alone. `--baseline` and `--variant` (bench/gateway-targets.ts) run
// more gateways beside this checkout's, each with the same sessions at the same time against the
// same engine, so their memory is compared under one load. Without `--cache-bytes` each gateway
// runs with its own default budget.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { AdminState } from "../protocol/admin.ts";
import { AGENT_TOOLS } from "./agent-body.ts";
import { gatewayArgs, gatewayTargets, targetEnv, type GatewayTarget } from "./gateway-targets.ts";
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
    baseline: { type: "string" },
    variant: { type: "string", multiple: true },
  },
});
const SESSIONS = Number(values.sessions ?? 1000);
const CALLS = Number(values["calls-per-session"] ?? 2);
const PROMPT_BYTES = Number(values["prompt-bytes"] ?? 100_000);
const CONCURRENCY = Number(values.concurrency ?? 16);
const CACHE_BYTES = values["cache-bytes"] === undefined ? undefined : Number(values["cache-bytes"]);
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
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"server/routes.py"}' } }],
    },
    { role: "tool", tool_call_id: "call_1", content: line.repeat(Math.max(1, Math.floor((bytes - 600) / line.length))) },
  ];
}

interface Run {
  target: GatewayTarget;
  child: Bun.Subprocess;
  url: string;
  warmRss: number;
  peak: number;
  quarterPeaks: number[];
  done: number;
  peakCache: number;
  budget: number;
  endRss: number;
  entries: number;
  seconds: number;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "polar-bench-memory-"));
  const enginePort = await freePort();
  const engineUrl = `http://127.0.0.1:${enginePort}`;
  const engine = Bun.spawn(["bun", "bin/polar.ts", "mock-engine", "--port", String(enginePort)], { cwd: ROOT, stderr: "inherit", stdout: "ignore" });
  const runs: Run[] = [];
  for (const target of gatewayTargets({ baseline: values.baseline, variant: values.variant }, ROOT)) {
    const port = await freePort();
    const args = gatewayArgs(target, { port, engineUrl, model: MODEL, adminToken: ADMIN, dir });
    if (CACHE_BYTES !== undefined) args.push("--cache-bytes", String(CACHE_BYTES));
    const child = Bun.spawn(["bun", ...(SMOL ? ["--smol"] : []), ...args, ...target.args], {
      cwd: target.cwd,
      env: targetEnv(target),
      stderr: "ignore",
      stdout: "ignore",
    });
    runs.push({
      target,
      child,
      url: `http://127.0.0.1:${port}`,
      warmRss: 0,
      peak: 0,
      quarterPeaks: [0, 0, 0, 0],
      done: 0,
      peakCache: 0,
      budget: 0,
      endRss: 0,
      entries: 0,
      seconds: 0,
    });
  }

  const admin = (run: Run, path: string, init: RequestInit = {}) => fetch(`${run.url}${path}`, { ...init, headers: { authorization: `Bearer ${ADMIN}` } });
  const newSession = async (run: Run) => ((await (await admin(run, "/v1/sessions", { method: "POST" })).json()) as { token: string }).token;
  const cacheState = async (run: Run) => AdminState.parse(await (await admin(run, "/v1/admin/state")).json()).cache;

  /** One session's calls: each turn re-sends the conversation so far plus the answer and a new user turn. */
  const runSession = async (run: Run, session: number) => {
    const key = await newSession(run);
    const messages = firstTurn(session, PROMPT_BYTES);
    for (let call = 0; call < CALLS; call++) {
      const res = await fetch(`${run.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: MODEL, max_tokens: 32, tools: AGENT_TOOLS, messages }),
      });
      if (!res.ok) throw new Error(`${run.target.name}: session ${session} call ${call}: HTTP ${res.status} ${await res.text()}`);
      const answer = ((await res.json()) as { choices: Array<{ message: { content: string | null } }> }).choices[0]!.message.content ?? "";
      messages.push({ role: "assistant", content: answer }, { role: "user", content: `Call ${call} done; go on.` });
    }
  };

  const sampler = setInterval(() => {
    for (const run of runs) {
      if (run.warmRss === 0) continue;
      const rss = rssBytes(run.child.pid);
      run.peak = Math.max(run.peak, rss);
      const quarter = Math.min(3, Math.floor((4 * run.done) / SESSIONS));
      run.quarterPeaks[quarter] = Math.max(run.quarterPeaks[quarter]!, rss);
    }
  }, 100);
  try {
    await waitHealthy(`${engineUrl}/health`);
    for (const run of runs) await waitHealthy(`${run.url}/health`);
    // Warm-up (JIT, template, SQLite pages) with a handful of sessions, then the fixed overhead.
    for (const run of runs) for (let i = 0; i < 4; i++) await runSession(run, -1 - i);
    await Bun.sleep(500);
    for (const run of runs) run.warmRss = run.peak = rssBytes(run.child.pid);
    await Promise.all(
      runs.map(async (run) => {
        const started = performance.now();
        let next = 0;
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            while (next < SESSIONS) {
              const session = next++;
              await runSession(run, session);
              run.done++;
              if (session % 50 === 0) run.peakCache = Math.max(run.peakCache, (await cacheState(run)).used_bytes);
            }
          }),
        );
        run.seconds = (performance.now() - started) / 1000;
        const final = await cacheState(run);
        run.peakCache = Math.max(run.peakCache, final.used_bytes);
        run.budget = final.max_bytes;
        run.entries = final.entries;
        run.endRss = rssBytes(run.child.pid);
        run.peak = Math.max(run.peak, run.endRss);
      }),
    );
    clearInterval(sampler);

    const mib = (b: number) => (b / MiB).toFixed(0);
    console.log(
      `machine: ${navigator.hardwareConcurrency} cores, Bun ${Bun.version}; ${SESSIONS} sessions × ${CALLS} calls of ~${PROMPT_BYTES} B prompts, ${CONCURRENCY} concurrent per gateway, ${runs.length} gateway(s) at once${SMOL ? ", under bun --smol" : ""}`,
    );
    console.log(
      "| gateway | settings | cache budget MiB | warm RSS MiB | peak RSS MiB per quarter of the sessions | peak RSS MiB | end RSS MiB | cache used (estimated) peak MiB | cache entries at end | seconds |",
    );
    console.log("|---|---|---:|---:|---|---:|---:|---:|---:|---:|");
    for (const run of runs) {
      const settings = [...Object.entries(run.target.env).map(([k, v]) => `${k}=${v}`), ...run.target.args].join(" ") || "—";
      console.log(
        `| ${run.target.name} | ${settings} | ${mib(run.budget)} | ${mib(run.warmRss)} | ${run.quarterPeaks.map(mib).join(" / ")} | ${mib(run.peak)} | ${mib(run.endRss)} | ${mib(run.peakCache)} | ${run.entries} | ${run.seconds.toFixed(0)} |`,
      );
    }
  } finally {
    clearInterval(sampler);
    for (const run of runs) run.child.kill();
    engine.kill();
    await Promise.all([...runs.map((r) => r.child.exited), engine.exited]);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
