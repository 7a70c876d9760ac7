// Why: what the node itself costs per rollout — its store, gateway, pipeline, sandbox pool and
// rollout API, i.e. everything but the harness, the engine and the tests — and whether its memory
// stays flat over many rollouts. `polar node` runs as a process of its own (process runtime under
// bwrap, the real `mini` harness) against the mock engine (another process, 0 ms latency); the
// bench submits tasks through the rollout API and hears each finish on its callback URL.
//
//   bun bench/node-rollout.ts [--rollouts 10000] [--warmup 100] [--samples 10] [--tasks-in-flight 3]
//                             [--baseline CHECKOUT] [--idle-seconds 15] [--workers 4]
//
// CPU: the node's own utime + stime from /proc/<pid>/stat (all its threads: JS, HTTP, the
// trajectory worker, SQLite). A child's CPU (bwrap, the harness, its bridge, the evaluator's
// command) is never in those fields — Linux adds a reaped child's time to the parent's cutime /
// cstime, which are not read — so the harness and the tests are excluded, not subtracted. The
// engine is another process. What is left is the node's work for a rollout, including the
// gateway's recording of its LLM calls, the spawning of its commands and reading their output.
//
// Memory (the coordinator bench's method): the node's RSS sampled every 250 ms, reported after
// the warm-up, as the peak of each quarter of the measured rollouts, at the last result, 1 s and
// `--idle-seconds` after it, and overall. Flat = the quarters and the idle figure do not climb
// with the rollouts done.
//
// `--baseline CHECKOUT` runs the node of another checkout (e.g. `git worktree add … <commit>`,
// `bun install` in it) at the same time, against the same engine, on the same task stream, so
// both see the same machine load.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { cpuSeconds, freePort, rssBytes, waitHealthy } from "./process-helpers.ts";

const { values } = parseArgs({
  options: {
    rollouts: { type: "string" },
    warmup: { type: "string" },
    samples: { type: "string" },
    "tasks-in-flight": { type: "string" },
    baseline: { type: "string" },
    "idle-seconds": { type: "string" },
    workers: { type: "string" },
  },
});
const ROLLOUTS = Number(values.rollouts ?? 10_000);
const WARMUP = Number(values.warmup ?? 100);
const SAMPLES = Number(values.samples ?? 10);
const TASKS_IN_FLIGHT = Number(values["tasks-in-flight"] ?? 3);
const IDLE_SECONDS = Number(values["idle-seconds"] ?? 15);
const WORKERS = Number(values.workers ?? 4);
const ADMIN = "bench-admin-token-0123456789";
/** Given by environment: a checkout from before the rollout-API token ignores it (and the header). */
const ROLLOUT = "bench-rollout-token-0123456789";
const ROOT = join(import.meta.dir, "..");
const MiB = 1024 * 1024;

/**
 * One rollout: the mock engine's default script has the agent run `echo hello > out.txt`, then
 * answer "Done." (two LLM calls); the evaluator reads the file in the agent's sandbox.
 */
function taskRequest(taskId: string, samples: number, callbackUrl: string): Record<string, unknown> {
  return {
    task_id: taskId,
    instruction: "Write the word hello into out.txt in the current folder, then say Done.",
    num_samples: samples,
    agent: { harness: "mini" },
    runtime: { image: "polar-bookworm:dev", workdir: "/work", prepare: [] },
    evaluator: { strategy: "command", config: { sandbox: "agent", command: "cat out.txt", expected_output: "hello" } },
    callback_url: callbackUrl,
    metadata: { group_id: taskId },
  };
}

interface TaskDone {
  task_id: string;
  status: string;
  results: Array<{ status: string; trajectory?: { traces: Array<{ reward: number }> } }>;
}

/** The bench's callback listener: every node posts its finished tasks here. */
function startListener(): { url: string; waitFor(taskId: string): Promise<TaskDone>; stop(): void } {
  const waiting = new Map<string, (done: TaskDone) => void>();
  const arrived = new Map<string, TaskDone>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const done = (await req.json()) as TaskDone;
      const resolve = waiting.get(done.task_id);
      if (resolve) {
        waiting.delete(done.task_id);
        resolve(done);
      } else arrived.set(done.task_id, done);
      return Response.json({ ok: true });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/done`,
    waitFor: (taskId) =>
      new Promise((resolve) => {
        const early = arrived.get(taskId);
        if (early) {
          arrived.delete(taskId);
          resolve(early);
        } else waiting.set(taskId, resolve);
      }),
    stop: () => server.stop(true),
  };
}

interface Node {
  name: string;
  child: Bun.Subprocess;
  url: string;
  /** RSS samples (MiB) with the rollouts finished when each was taken. */
  samples: Array<{ done: number; rss: number }>;
  done: number;
  statuses: Map<string, number>;
  rewards: number;
  warmRss: number;
  cpuAtStart: number;
  cpuAtEnd: number;
  secondsMeasured: number;
  endRss: number;
  idle1Rss: number;
  idleRss: number;
}

async function startNodeProcess(name: string, cwd: string, engineUrl: string, dir: string): Promise<Node> {
  const port = await freePort();
  const args = [
    "bin/polar.ts",
    "node",
    "--node-id",
    `bench-${name}-${process.pid}`,
    "--port",
    String(port),
    "--db",
    join(dir, `${name}.db`),
    "--admin-token",
    ADMIN,
  ];
  args.push(
    "--runtime",
    "process",
    "--engine",
    engineUrl,
    "--init-workers",
    String(WORKERS),
    "--run-workers",
    String(WORKERS),
    "--postrun-workers",
    String(WORKERS),
    "--ready-backlog",
    String(WORKERS),
  );
  const child = Bun.spawn(["bun", ...args], { cwd, stderr: "inherit", stdout: "ignore", env: { ...process.env, POLAR_ROLLOUT_TOKEN: ROLLOUT } });
  const node: Node = {
    name,
    child,
    url: `http://127.0.0.1:${port}`,
    samples: [],
    done: 0,
    statuses: new Map(),
    rewards: 0,
    warmRss: 0,
    cpuAtStart: 0,
    cpuAtEnd: 0,
    secondsMeasured: 0,
    endRss: 0,
    idle1Rss: 0,
    idleRss: 0,
  };
  return node;
}

/** Runs `total` rollouts on `node` as tasks of `SAMPLES`, `TASKS_IN_FLIGHT` tasks outstanding at a time. */
async function drive(node: Node, listener: ReturnType<typeof startListener>, prefix: string, total: number, counted: boolean): Promise<void> {
  let submitted = 0;
  const worker = async () => {
    while (submitted < total) {
      const samples = Math.min(SAMPLES, total - submitted);
      submitted += samples;
      const taskId = `${prefix}-${submitted}`;
      const finished = listener.waitFor(taskId);
      const res = await fetch(`${node.url}/rollout/task/submit`, {
        method: "POST",
        headers: { authorization: `Bearer ${ROLLOUT}`, "content-type": "application/json" },
        body: JSON.stringify(taskRequest(taskId, samples, listener.url)),
      });
      if (!res.ok) throw new Error(`${node.name}: submit ${taskId}: HTTP ${res.status} ${await res.text()}`);
      const done = await finished;
      if (!counted) continue;
      for (const r of done.results) {
        node.statuses.set(r.status, (node.statuses.get(r.status) ?? 0) + 1);
        node.rewards += r.trajectory?.traces[0]?.reward ?? 0;
      }
      node.done += done.results.length;
    }
  };
  await Promise.all(Array.from({ length: TASKS_IN_FLIGHT }, worker));
}

const mib = (bytes: number) => bytes / MiB;
const fmt = (x: number) => x.toFixed(0);

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "polar-bench-node-"));
  const enginePort = await freePort();
  const engine = Bun.spawn(["bun", "bin/polar.ts", "mock-engine", "--port", String(enginePort)], { cwd: ROOT, stderr: "inherit", stdout: "ignore" });
  const engineUrl = `http://127.0.0.1:${enginePort}`;
  const listener = startListener();
  const nodes = [await startNodeProcess("this", ROOT, engineUrl, dir)];
  if (values.baseline) nodes.push(await startNodeProcess("baseline", values.baseline, engineUrl, dir));
  const sampler = setInterval(() => {
    for (const n of nodes) n.samples.push({ done: n.done, rss: mib(rssBytes(n.child.pid)) });
  }, 250);
  try {
    await waitHealthy(`${engineUrl}/health`);
    for (const n of nodes) await waitHealthy(`${n.url}/health`);
    const started = performance.now();
    await Promise.all(
      nodes.map(async (n) => {
        await drive(n, listener, `warm-${n.name}`, WARMUP, false);
        await Bun.sleep(1000);
        n.warmRss = mib(rssBytes(n.child.pid));
        n.samples.length = 0;
        n.cpuAtStart = cpuSeconds(n.child.pid);
        const t0 = performance.now();
        await drive(n, listener, `run-${n.name}`, ROLLOUTS, true);
        n.cpuAtEnd = cpuSeconds(n.child.pid);
        n.secondsMeasured = (performance.now() - t0) / 1000;
        n.endRss = mib(rssBytes(n.child.pid));
        await Bun.sleep(1000);
        n.idle1Rss = mib(rssBytes(n.child.pid));
        await Bun.sleep((IDLE_SECONDS - 1) * 1000);
        n.idleRss = mib(rssBytes(n.child.pid));
      }),
    );
    const wall = (performance.now() - started) / 1000;
    clearInterval(sampler);
    console.log(
      `machine: ${navigator.hardwareConcurrency} cores, Bun ${Bun.version}; process runtime (bwrap), mini harness, mock engine at 0 ms; ${WARMUP} warm-up + ${ROLLOUTS} rollouts per node as tasks of ${SAMPLES}, ${TASKS_IN_FLIGHT} tasks in flight, ${WORKERS} workers per stage; ${fmt(wall)} s`,
    );
    console.log(
      "| node | rollouts | statuses | reward sum | node CPU s | node CPU ms per rollout | rollouts/s | warm RSS MiB | peak RSS MiB per quarter | end RSS | 1 s idle | " +
        `${IDLE_SECONDS} s idle | peak RSS MiB |`,
    );
    console.log("|---|---:|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|");
    for (const n of nodes) {
      const quarters = [0, 0, 0, 0];
      for (const s of n.samples) {
        const q = Math.min(3, Math.floor((4 * s.done) / ROLLOUTS));
        quarters[q] = Math.max(quarters[q]!, s.rss);
      }
      const peak = Math.max(n.warmRss, ...n.samples.map((s) => s.rss));
      const cpu = n.cpuAtEnd - n.cpuAtStart;
      const statuses = [...n.statuses].map(([s, c]) => `${s} ${c}`).join(", ");
      console.log(
        `| ${n.name} | ${n.done} | ${statuses} | ${n.rewards} | ${cpu.toFixed(1)} | ${((cpu * 1000) / n.done).toFixed(1)} | ${(n.done / n.secondsMeasured).toFixed(1)} | ${fmt(n.warmRss)} | ${quarters.map(fmt).join(" / ")} | ${fmt(n.endRss)} | ${fmt(n.idle1Rss)} | ${fmt(n.idleRss)} | ${fmt(peak)} |`,
      );
    }
  } finally {
    clearInterval(sampler);
    for (const n of nodes) n.child.kill("SIGTERM");
    engine.kill("SIGTERM");
    await Promise.all([...nodes.map((n) => n.child.exited), engine.exited]);
    listener.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
