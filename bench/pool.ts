// Why: the pool exists so that a rollout never waits for a sandbox start; this measures, in one
// run, what a rollout waits without it (cold: create + start + a prepare that uploads a small
// repository + the harness process running: it answers) and with it (warm: pool hit with liveness
// check + the same harness process), p50 / p99 over the same number of starts, per runtime.
//
//   bun bench/pool.ts [--runs 50] [--image polar-bookworm:dev] [--batch 10] [--runtimes docker,process,process-unarmed]
//
// `process` is the bwrap runtime (it has no images: the same repository is uploaded by prepare);
// `process-unarmed` is the same with no bwrap readers started ahead (a new bwrap per command),
// to see in one run what the readers buy.
// Warm hand-outs are timed in batches: the pool fills `--batch` sandboxes, then they are taken
// one after another with no refill running (demand falls with each take), so the figure is the
// hand-out itself; the refill that follows is what the pool hides behind queued rollouts.
// "prepared" is a pool with prepareInPool (one pool per task, as the n samples of a group share
// one): its hand-outs already hold the repository. The same harness-like command spawned on the
// host, outside any sandbox, is timed too: the floor under every warm row.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createDockerRuntime } from "../node/runtime/docker/docker.ts";
import { probeDocker } from "../node/runtime/docker/docker-probe.ts";
import { createProcessRuntime } from "../node/runtime/process/process.ts";
import { createSandboxPool } from "../node/runtime/pool.ts";
import { prepareSandbox } from "../node/runtime/prepare.ts";
import { RuntimeSpec, type Sandbox, type SandboxRuntime } from "../node/runtime/types.ts";

const { values } = parseArgs({
  options: { runs: { type: "string" }, image: { type: "string" }, batch: { type: "string" }, runtimes: { type: "string" } },
});
const RUNS = Number(values.runs ?? 50);
const IMAGE = values.image ?? "polar-bookworm:dev";
const BATCH = Number(values.batch ?? 10);
const RUNTIMES = (values.runtimes ?? "docker,process,process-unarmed").split(",");
const NODE_ID = `bench-pool-${process.pid}`;
/**
 * What a harness start looks like from the pool's side: one process running in the sandbox that
 * answers from the repository (the "harness process running"). A real CLI's own start-up
 * (Node.js loading it) is the same with or without the pool, so it is left out of every row.
 */
const HARNESS = ["ls", "/work/repo"];
const answered = (stdout: string) => stdout.split("\n").includes("setup.py");

async function smallRepository(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "polar-bench-repo-"));
  await mkdir(join(dir, "src", "pkg"), { recursive: true });
  for (let i = 0; i < 20; i++) await writeFile(join(dir, "src", "pkg", `mod_${i}.py`), `def f_${i}(x):\n    return x + ${i}\n`.repeat(40));
  await writeFile(join(dir, "README.md"), "# bench repository\n".repeat(50));
  await writeFile(join(dir, "setup.py"), "from setuptools import setup\nsetup(name='bench')\n");
  return dir;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
}

function summary(samples: number[]): { p50: number; p99: number; mean: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), mean: samples.reduce((a, b) => a + b, 0) / samples.length };
}

async function runHarness(sandbox: Sandbox): Promise<void> {
  const result = await sandbox.exec({ command: HARNESS, timeoutMs: 60_000 });
  if (result.exit_code !== 0 || !answered(result.stdout)) {
    throw new Error(`harness-like process failed: ${JSON.stringify(result)}`);
  }
}

/** The harness-like command as a plain host process in the repository (no sandbox, no pool). */
async function hostHarness(repo: string, runs: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const child = Bun.spawn(["ls", repo], { stdout: "pipe" });
    const out = await new Response(child.stdout).text();
    if ((await child.exited) !== 0 || !answered(out)) throw new Error(`host harness failed: ${out}`);
    samples.push(performance.now() - started);
  }
  return samples;
}

async function cold(runtime: SandboxRuntime, spec: RuntimeSpec, runs: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const sandbox = await runtime.create({ spec, labels: { node_id: NODE_ID, rollout_id: `cold-${i}` } });
    await prepareSandbox(sandbox, spec.prepare);
    await runHarness(sandbox);
    samples.push(performance.now() - started);
    await sandbox.destroy();
  }
  return samples;
}

async function warm(runtime: SandboxRuntime, spec: RuntimeSpec, prepareInPool: boolean): Promise<{ samples: number[]; refillMs: number[] }> {
  const pool = createSandboxPool({ runtime, nodeId: NODE_ID, maxReadyPerKey: BATCH, healthCheckMs: 0, prepareInPool });
  const samples: number[] = [];
  const refillMs: number[] = [];
  try {
    while (samples.length < RUNS) {
      const want = Math.min(BATCH, RUNS - samples.length);
      const filling = performance.now();
      pool.setDemand(spec, want);
      while (Object.values(pool.warm()).reduce((a, b) => a + b, 0) < want) await Bun.sleep(5);
      refillMs.push(performance.now() - filling);
      for (let i = 0; i < want; i++) {
        const started = performance.now();
        const sandbox = await pool.take(spec, { rollout_id: `warm-${samples.length}` });
        if (!prepareInPool) await prepareSandbox(sandbox, spec.prepare);
        await runHarness(sandbox);
        samples.push(performance.now() - started);
        await pool.release(sandbox);
      }
    }
  } finally {
    await pool.close();
  }
  return { samples, refillMs };
}

async function makeRuntime(name: string, root: string): Promise<SandboxRuntime | string> {
  if (name === "docker") {
    const probe = await probeDocker([IMAGE]);
    return probe.ok ? createDockerRuntime({ docker: probe.docker, runRoot: join(root, "docker") }) : probe.reason;
  }
  if (name === "process" || name === "process-unarmed") {
    const runtime = createProcessRuntime({ root: join(root, name), standbyReaders: name === "process" ? 2 : 0 });
    return runtime.isolated ? runtime : "bwrap is not installed (the process runtime would run unisolated)";
  }
  return `unknown runtime ${name}`;
}

const repo = await smallRepository();
const root = await mkdtemp(join(tmpdir(), "polar-bench-pool-"));
const spec = RuntimeSpec.parse({ image: IMAGE, prepare: [{ type: "upload_dir", source: repo, path: "/work/repo" }] });
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
console.log(`runs ${RUNS} per row, batch ${BATCH}, image ${IMAGE}, repository: 22 files (~60 KB)`);
const rows: string[] = ["| runtime | path | p50 | p99 | mean | cold p50 / this p50 |", "|---|---|---|---|---|---|"];
try {
  const floor = summary(await hostHarness(repo, RUNS));
  console.log(`the harness-like command alone, on the host: p50 ${fmt(floor.p50)}, p99 ${fmt(floor.p99)}`);
  for (const name of RUNTIMES) {
    const runtime = await makeRuntime(name, root);
    if (typeof runtime === "string") {
      console.log(`${name}: skipped (${runtime})`);
      continue;
    }
    await runtime.removeLeftovers(NODE_ID);
    // One unmeasured start warms the engine's and the page cache's first-use costs.
    await cold(runtime, spec, 1);
    const c = summary(await cold(runtime, spec, RUNS));
    const w = await warm(runtime, spec, false);
    const p = await warm(runtime, spec, true);
    const ws = summary(w.samples);
    const ps = summary(p.samples);
    rows.push(`| ${name} | cold: create + start + prepare (upload repo) + harness | ${fmt(c.p50)} | ${fmt(c.p99)} | ${fmt(c.mean)} | 1.0× |`);
    rows.push(`| ${name} | warm: pool hit + prepare + harness | ${fmt(ws.p50)} | ${fmt(ws.p99)} | ${fmt(ws.mean)} | ${(c.p50 / ws.p50).toFixed(1)}× |`);
    rows.push(`| ${name} | warm prepared: pool hit + harness | ${fmt(ps.p50)} | ${fmt(ps.p99)} | ${fmt(ps.mean)} | ${(c.p50 / ps.p50).toFixed(1)}× |`);
    const refill = summary(p.refillMs);
    console.log(`${name}: background refill of a batch of ${BATCH} prepared sandboxes: p50 ${fmt(refill.p50)}`);
    await runtime.removeLeftovers(NODE_ID);
  }
} finally {
  await rm(repo, { recursive: true, force: true });
  await rm(root, { recursive: true, force: true });
}
console.log(rows.join("\n"));
