// Why: what the gateway costs is CPU per call, and on a shared machine wall latency hides it; this
// measures the gateway process's own CPU seconds (/proc/<pid>/stat) around a closed-loop run —
// 32 concurrent sessions, each its own API key and one worker, as real agents do — against a
// fake vLLM engine that answers at once with token ids, so nothing but the gateway is measured.
//
//   bun bench/gateway-cpu.ts [--calls-per-session 20] [--sessions 32] [--rounds 3] [--stream] [--profile DIR]
//                            [--only 100kb|1kb] [--baseline CHECKOUT] [--variant NAME:SETTING,…]…
//
// Each round measures, for a coding-agent request of ~100 KB (growing by a tool turn a call) and of ~1 KB: the gateway, and a bare
// Bun pass-through (forwards the body to the engine and its answer back: the floor of any proxy).
// Within a round all of them are loaded at the same time, so they see the same machine load.
// `--profile DIR` starts the gateway under `bun --cpu-prof` (profile written to DIR on exit).
// `--baseline CHECKOUT` also runs the gateway of another checkout (e.g. `git archive <commit>`
// unpacked, with node_modules linked) in the same rounds, so a change is compared on equal load;
// each `--variant` (bench/gateway-targets.ts) runs one more gateway with other settings. Every
// gateway's RSS is sampled every 100 ms: its peak is printed per case and over the run.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { PURGE_DELAY_ENV, PURGE_DELAY_MS } from "../lib/allocator-options.ts";
import { agentBody } from "./agent-body.ts";
import { OUTPUT_TOKENS, vllmAnswer } from "./fake-vllm-answer.ts";
import { gatewayArgs, gatewayTargets, targetEnv, type GatewayTarget } from "./gateway-targets.ts";
import { CLOCK_TICKS_PER_SECOND, cpuSeconds, freePort, rssBytes, waitHealthy } from "./process-helpers.ts";

const { values } = parseArgs({
  options: {
    "calls-per-session": { type: "string" },
    sessions: { type: "string" },
    rounds: { type: "string" },
    stream: { type: "boolean" },
    profile: { type: "string" },
    only: { type: "string" },
    baseline: { type: "string" },
    variant: { type: "string", multiple: true },
    "passthrough-to": { type: "string" },
    port: { type: "string" },
  },
});
const ADMIN = "bench-admin-token-0123456789";
const MODEL = "Qwen/Qwen3-8B";
const ROOT = join(import.meta.dir, "..");

/** Child mode: a bare Bun pass-through proxy (what any proxy pays at least: HTTP in, HTTP out). */
async function passthrough(engineUrl: string, port: number): Promise<void> {
  Bun.serve({
    hostname: "127.0.0.1",
    port,
    async fetch(req) {
      const url = new URL(req.url);
      if (url.pathname === "/health") return new Response("ok");
      const res = await fetch(engineUrl + url.pathname, { method: "POST", headers: { "content-type": "application/json" }, body: await req.text() });
      return new Response(await res.text(), { status: res.status, headers: { "content-type": "application/json" } });
    },
  });
  await new Promise(() => {});
}

/** The fake engine: answers every chat call at once; ~4 request bytes per prompt token, like Qwen3 on code. */
function startFakeEngine(): { url: string; stop(): void } {
  const answers = new Map<number, string>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      if (new URL(req.url).pathname === "/health") return new Response("ok");
      const bytes = (await req.arrayBuffer()).byteLength;
      const promptIds = Math.round(bytes / 4);
      let answer = answers.get(promptIds);
      if (!answer) answers.set(promptIds, (answer = vllmAnswer(promptIds)));
      return new Response(answer, { headers: { "content-type": "application/json" } });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

/** CPU seconds of each thread of a process, summed by thread name (JS thread, GC helpers, I/O). */
function cpuByThread(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND);
    } catch {
      // the thread ended meanwhile
    }
  }
  return byName;
}

/** Closed loop: each key is one worker sending `payloads` in order, back to back. Returns CPU ms per call of `pid`. */
async function cpuPerCall(pid: number, url: string, keys: string[], payloads: readonly string[]): Promise<number> {
  const before = cpuSeconds(pid);
  await Promise.all(
    keys.map(async (key) => {
      for (const payload of payloads) {
        const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: payload });
        const text = await res.text();
        if (!res.ok) throw new Error(`${url}: HTTP ${res.status}: ${text.slice(0, 300)}`);
      }
    }),
  );
  return ((cpuSeconds(pid) - before) * 1000) / (keys.length * payloads.length);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

interface Target {
  name: string;
  child: Bun.Subprocess;
  url: string;
  /** One API key per session (the pass-through ignores them). */
  keys: string[];
  /** Highest RSS sampled (bytes): over the run, and during the current case. */
  peakRss: number;
  casePeakRss: number;
}

/** A gateway of `target` (a checkout, its environment and flags), on its own SQLite file. */
async function startGateway(target: GatewayTarget, engineUrl: string, dir: string, profile: string[]): Promise<Omit<Target, "keys">> {
  const port = await freePort();
  const args = [...gatewayArgs(target, { port, engineUrl, model: MODEL, adminToken: ADMIN, dir }), ...target.args];
  const child = Bun.spawn(["bun", ...profile, ...args], { cwd: target.cwd, env: targetEnv(target), stderr: "inherit", stdout: "ignore" });
  return { name: target.name, child, url: `http://127.0.0.1:${port}`, peakRss: 0, casePeakRss: 0 };
}

async function openSessions(gatewayUrl: string, n: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const res = await fetch(`${gatewayUrl}/v1/sessions`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}` } });
      return ((await res.json()) as { token: string }).token;
    }),
  );
}

async function main(): Promise<void> {
  const perSession = Number(values["calls-per-session"] ?? 20);
  const sessionCount = Number(values.sessions ?? 32);
  const rounds = Number(values.rounds ?? 3);
  const stream = values.stream === true;
  const dir = mkdtempSync(join(tmpdir(), "polar-bench-cpu-"));
  const engine = startFakeEngine();
  const profile = values.profile ? ["--cpu-prof", `--cpu-prof-dir=${values.profile}`] : [];
  const started: Array<Omit<Target, "keys">> = [];
  for (const [i, target] of gatewayTargets({ baseline: values.baseline, variant: values.variant }, ROOT).entries()) {
    // Profiled, `polar gateway` does not re-execute itself with its allocator setting (lib/allocator-options.ts): given here.
    const profiled = i === 0 && profile.length > 0 ? { ...target, env: { [PURGE_DELAY_ENV]: PURGE_DELAY_MS, ...target.env } } : target;
    started.push(await startGateway(profiled, engine.url, dir, i === 0 ? profile : []));
  }
  const proxyPort = await freePort();
  started.push({
    name: "pass-through",
    child: Bun.spawn(["bun", import.meta.path, "--passthrough-to", engine.url, "--port", String(proxyPort)], { stderr: "inherit", stdout: "ignore" }),
    url: `http://127.0.0.1:${proxyPort}`,
    peakRss: 0,
    casePeakRss: 0,
  });
  const sampler = setInterval(() => {
    for (const t of started) {
      try {
        const rss = rssBytes(t.child.pid);
        t.peakRss = Math.max(t.peakRss, rss);
        t.casePeakRss = Math.max(t.casePeakRss, rss);
      } catch {
        // not started yet, or gone
      }
    }
  }, 100);
  try {
    const targets: Target[] = [];
    for (const t of started) {
      await waitHealthy(`${t.url}/health`);
      targets.push({ ...t, keys: t.name === "pass-through" ? Array.from({ length: sessionCount }, () => "x") : await openSessions(t.url, sessionCount) });
    }
    // Each round, every session of the 100 KB case makes its calls with a context that grows by one
    // tool call and its result per call (~1 KB), as an agent's does; the fake engine's prompt ids
    // depend on their position only, so each call's prompt extends the previous one, as a real
    // engine's. The 1 KB case repeats its request (a tool turn would more than double it).
    const growing = (bytes: number, calls: number) => Array.from({ length: calls }, (_, turn) => JSON.stringify(agentBody(MODEL, bytes, stream, turn)));
    const allCases = [
      { label: "100 KB", payloads: growing(100_000, perSession) },
      { label: "1 KB", payloads: Array.from({ length: perSession * 5 }, () => JSON.stringify(agentBody(MODEL, 1_000, stream))) },
    ];
    const cases = allCases.filter((c) => values.only === undefined || c.label.replace(" ", "").toLowerCase() === values.only);
    // Warm every process (JIT, SQLite pages, the engine's cached answers).
    for (const c of cases) for (const t of targets) await cpuPerCall(t.child.pid, `${t.url}/v1/chat/completions`, t.keys, c.payloads.slice(0, 3));
    const results = cases.map(() => targets.map(() => [] as number[]));
    const casePeaks = cases.map(() => targets.map(() => 0));
    for (let r = 0; r < rounds; r++) {
      for (const [i, c] of cases.entries()) {
        for (const t of started) t.casePeakRss = 0;
        // All targets under load at once: each sees the same machine (other helpers' load varies by the second).
        const perCall = await Promise.all(targets.map((t) => cpuPerCall(t.child.pid, `${t.url}/v1/chat/completions`, t.keys, c.payloads)));
        for (const [j, ms] of perCall.entries()) results[i]![j]!.push(ms);
        for (const [j, t] of targets.entries()) casePeaks[i]![j] = Math.max(casePeaks[i]![j]!, (started.find((s) => s.name === t.name) ?? t).casePeakRss);
      }
    }
    console.log(
      `fake vLLM engine (answers at once, ${OUTPUT_TOKENS} sampled ids); ${sessionCount} sessions, one worker each; ${rounds} rounds; stream ${stream}; machine: ${navigator.hardwareConcurrency} cores; Bun ${Bun.version}`,
    );
    console.log(`CPU ms per call: median of the rounds, [lowest round] (other load on the machine only adds, so the lowest is the least disturbed):`);
    console.log(`| body | prompt ids | calls per round | ${targets.map((t) => t.name).join(" | ")} |`);
    console.log(`|---|---:|---:|${targets.map(() => "---:|").join("")}`);
    for (const [i, c] of cases.entries()) {
      const cells = results[i]!.map((xs) => `${median(xs).toFixed(2)} [${Math.min(...xs).toFixed(2)}]`);
      const [first, last] = [c.payloads[0]!.length, c.payloads.at(-1)!.length];
      console.log(
        `| ${c.label} (${first} → ${last} B) | ${Math.round(first / 4)} → ${Math.round(last / 4)} | ${sessionCount * c.payloads.length} | ${cells.join(" | ")} |`,
      );
    }
    console.log("peak RSS MiB while each case ran (all rounds), and over the whole run (warm-up and session set-up included):");
    console.log(`| | ${targets.map((t) => t.name).join(" | ")} |`);
    console.log(`|---|${targets.map(() => "---:|").join("")}`);
    for (const [i, c] of cases.entries()) console.log(`| ${c.label} | ${casePeaks[i]!.map((b) => (b / 1048576).toFixed(0)).join(" | ")} |`);
    console.log(`| whole run | ${targets.map((t) => ((started.find((s) => s.name === t.name)?.peakRss ?? 0) / 1048576).toFixed(0)).join(" | ")} |`);
    const gatewayThreads = [...cpuByThread(targets[0]!.child.pid)].sort((a, b) => b[1] - a[1]).filter(([, sec]) => sec >= 0.05);
    console.log(`gateway CPU by thread over the whole run (s): ${gatewayThreads.map(([name, sec]) => `${name} ${sec.toFixed(2)}`).join(", ")}`);
  } finally {
    clearInterval(sampler);
    for (const t of started) t.child.kill("SIGTERM");
    await Promise.all(started.map((t) => t.child.exited));
    engine.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (values["passthrough-to"]) await passthrough(values["passthrough-to"], Number(values.port));
else await main();
