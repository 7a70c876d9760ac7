// Why: the gateway sits on every LLM call of every rollout; this measures what it adds over
// calling the engine directly (same body, same engine), at 1 and 32 concurrent sessions, with a
// small and a ~100 KB coding-agent-shaped body, streaming and not, and the gateway's memory.
//
//   bun bench/gateway.ts [--requests-per-session 10] [--ttft-ms 50] [--pin]
//
// The engine (mock, emulating `--ttft-ms` per call) and the gateway run as separate processes,
// so the RSS printed is the gateway's alone. On a 2-core machine the mock engine's own CPU work
// (template rendering, tokenizing) and the load generator compete with the gateway, which a GPU
// engine would not; `--pin` gives the gateway CPU 1 and the engine + load generator CPU 0 (taskset),
// the way a node agent runs beside vLLM on a GPU host.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { agentBody } from "./agent-body.ts";
import { freePort, rssBytes, waitHealthy } from "./process-helpers.ts";

const { values } = parseArgs({ options: { "requests-per-session": { type: "string" }, "ttft-ms": { type: "string" }, pin: { type: "boolean" } } });
const PIN = values.pin === true;
const PER_SESSION = Number(values["requests-per-session"] ?? 10);
const TTFT_MS = Number(values["ttft-ms"] ?? 50);
const ADMIN = "bench-admin-token-0123456789";
const MODEL = "Qwen/Qwen3-8B";
const ROOT = join(import.meta.dir, "..");

const rssMiB = (pid: number) => rssBytes(pid) / 1024 / 1024;

interface CaseResult {
  p50: number;
  p99: number;
  throughput: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function runCase(url: string, keys: string[], body: Record<string, unknown>): Promise<CaseResult> {
  const payload = JSON.stringify(body);
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    keys.map(async (key) => {
      for (let i = 0; i < PER_SESSION; i++) {
        const t0 = performance.now();
        const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: payload });
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const wall = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), throughput: latencies.length / wall };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "polar-bench-"));
  const [enginePort, gatewayPort] = [await freePort(), await freePort()];
  const engineUrl = `http://127.0.0.1:${enginePort}`;
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const onCpu = (cpu: number) => (PIN ? ["taskset", "-c", String(cpu)] : []);
  if (PIN) Bun.spawnSync(["taskset", "-cp", "0", String(process.pid)]);
  const engine = Bun.spawn([...onCpu(0), "bun", "bin/polar.ts", "mock-engine", "--port", String(enginePort), "--ttft-ms", String(TTFT_MS)], {
    cwd: ROOT,
    stderr: "inherit",
    stdout: "ignore",
  });
  const gateway = Bun.spawn(
    [
      ...onCpu(1),
      "bun",
      "bin/polar.ts",
      "gateway",
      "--port",
      String(gatewayPort),
      "--engine",
      engineUrl,
      "--model",
      MODEL,
      "--db",
      join(dir, "bench.db"),
      "--admin-token",
      ADMIN,
      "--retries",
      "0",
    ],
    { cwd: ROOT, stderr: "ignore", stdout: "ignore" },
  );
  try {
    await waitHealthy(`${engineUrl}/health`);
    await waitHealthy(`${gatewayUrl}/health`);
    const sessionKeys = async (n: number) =>
      Promise.all(
        Array.from({ length: n }, async () => {
          const res = await fetch(`${gatewayUrl}/v1/sessions`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}` } });
          return ((await res.json()) as { token: string }).token;
        }),
      );
    // Warm both paths (template compile, JIT, SQLite pages).
    const [warmKey] = await sessionKeys(1);
    await runCase(`${gatewayUrl}/v1/chat/completions`, [warmKey!], agentBody(MODEL, 100_000, false));
    await runCase(`${engineUrl}/v1/chat/completions`, ["x"], agentBody(MODEL, 100_000, false));

    console.log(
      `engine: mock, ${TTFT_MS} ms per call; ${PER_SESSION} requests per session; machine: ${navigator.hardwareConcurrency} cores; ${PIN ? "pinned: gateway CPU 1, engine + load CPU 0" : "not pinned"}`,
    );
    console.log(
      "| body | stream | sessions | direct p50 ms | gateway p50 ms | p50 overhead | direct p99 ms | gateway p99 ms | direct req/s | gateway req/s | gateway RSS MiB |",
    );
    console.log("|---|---|---|---|---|---|---|---|---|---|---|");
    let peakRss = 0;
    for (const size of [1_000, 100_000]) {
      for (const stream of [false, true]) {
        for (const concurrency of [1, 32]) {
          const body = agentBody(MODEL, size, stream);
          const direct = await runCase(
            `${engineUrl}/v1/chat/completions`,
            Array.from({ length: concurrency }, () => "x"),
            body,
          );
          const viaGateway = await runCase(`${gatewayUrl}/v1/chat/completions`, await sessionKeys(concurrency), body);
          const rss = rssMiB(gateway.pid);
          peakRss = Math.max(peakRss, rss);
          const overhead = ((viaGateway.p50 / direct.p50 - 1) * 100).toFixed(1);
          const kb = `${Math.round(JSON.stringify(body).length / 1000)} KB`;
          console.log(
            `| ${kb} | ${stream} | ${concurrency} | ${direct.p50.toFixed(1)} | ${viaGateway.p50.toFixed(1)} | ${overhead}% | ${direct.p99.toFixed(1)} | ${viaGateway.p99.toFixed(1)} | ${direct.throughput.toFixed(1)} | ${viaGateway.throughput.toFixed(1)} | ${rss.toFixed(0)} |`,
          );
        }
      }
    }
    console.log(`gateway peak RSS: ${peakRss.toFixed(0)} MiB`);
  } finally {
    engine.kill();
    gateway.kill();
    await Promise.all([engine.exited, gateway.exited]);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
