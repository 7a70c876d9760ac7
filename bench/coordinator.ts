// Why: the coordinator must keep up with a large cluster: this measures, in one run, how fast it
// dispatches 100,000 queued rollouts to 1,000 nodes, how fast it streams results with realistic
// trace sizes to one trainer (results/s, MB/s), and its memory while doing so.
//
//   bun bench/coordinator.ts [--nodes 1000] [--rollouts 100000] [--realistic 10000] [--trace-tokens 4000]
//   bun bench/coordinator.ts --compare …   streaming only, before and after trace frames (bench/coordinator-stream.ts)
//
// The coordinator runs as its own process (`polar coordinator`, SQLite file in a temp folder), so
// the RSS printed is its alone. The nodes are in-process WebSocket clients speaking the node
// protocol (test/support/coordinator/simulated-node.ts) that hold every assignment until released and
// report results as binary trace frames; the trainer is the TypeScript client (binary trace
// frames) with a credit window of 512.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { TrainerClient } from "../clients/typescript/trainer-client.ts";
import type { Assignment, ReportedResult } from "../protocol/node-link.ts";
import { nodeResultFrame } from "../protocol/trace-frame.ts";
import { TOKENS } from "../test/support/coordinator/cluster.ts";
import { defaultResult, SimulatedNode } from "../test/support/coordinator/simulated-node.ts";
import { PolarProcesses } from "../test/helpers/polar-processes.ts";
import { cpuSeconds, rssBytes } from "./process-helpers.ts";

const { values } = parseArgs({
  options: {
    nodes: { type: "string" },
    rollouts: { type: "string" },
    realistic: { type: "string" },
    "trace-tokens": { type: "string" },
    compare: { type: "boolean" },
    baseline: { type: "string" },
    results: { type: "string" },
    "stream-nodes": { type: "string" },
  },
});
if (values.compare) {
  await import("./coordinator-stream.ts");
  process.exit(0);
}
const NODES = Number(values.nodes ?? 1000);
const ROLLOUTS = Number(values.rollouts ?? 100_000);
const REALISTIC = Number(values.realistic ?? 10_000);
const TRACE_TOKENS = Number(values["trace-tokens"] ?? 4000);
const GROUP_SIZE = 1000;
const SETTLE_MS = 15_000;
const dir = mkdtempSync(join(tmpdir(), "polar-bench-coord-"));

const processes = new PolarProcesses();
const { url, child } = await processes.coordinator({ db: join(dir, "c.db"), heartbeatMs: 30_000 });

const rssMiB = () => rssBytes(child.pid) / 1024 / 1024;
let peak = 0;
const samples: { phase: string; rss: number }[] = [];
let phase = "connect";
/** The coordinator's own view of its memory (JS heap vs RSS): at the end of each phase, and the most seen in each. */
const heapAt: Record<string, number> = {};
const heapPeak: Record<string, number> = {};
async function heapUsedMiB(): Promise<number> {
  const stats = (await (await fetch(`${url}/v1/admin/stats`, { headers: { authorization: `Bearer ${TOKENS.adminToken}` } })).json()) as {
    memory: { heap_used_bytes: number };
  };
  return stats.memory.heap_used_bytes / 1024 / 1024;
}
async function recordHeap(name: string): Promise<void> {
  heapAt[name] = await heapUsedMiB();
}
const sampler = setInterval(() => {
  const rss = rssMiB();
  peak = Math.max(peak, rss);
  samples.push({ phase, rss });
}, 250);
const heapSampler = setInterval(async () => {
  const at = phase;
  const heap = await heapUsedMiB();
  heapPeak[at] = Math.max(heapPeak[at] ?? 0, heap);
}, 2000);

async function until(check: () => boolean, what: string, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await Bun.sleep(5);
  }
}

/** A realistic trace: prompt 3/4 of the tokens, response 1/4, real-looking ids and logprobs. */
function realisticResult(a: Assignment): ReportedResult {
  const base = defaultResult(a, Math.random() < 0.5 ? 1 : 0, 1);
  const promptLen = Math.floor(TRACE_TOKENS * 0.75);
  const responseLen = TRACE_TOKENS - promptLen;
  const id = () => 100 + Math.floor(Math.random() * 150_000);
  base.trajectory.traces = [
    {
      prompt_ids: Array.from({ length: promptLen }, id),
      response_ids: Array.from({ length: responseLen }, id),
      loss_mask: Array.from({ length: responseLen }, (_, i) => (i % 7 === 6 ? 0 : 1)),
      response_logprobs: Array.from({ length: responseLen }, () => -Math.random() * 3),
      finish_reason: "stop",
      reward: 1,
      metadata: { policy_versions: [0] },
    },
  ];
  return base;
}

/** The coordinator's CPU seconds at each time mark: the CPU a step cost it, whatever else the machine ran. */
const cpuAtMark = new Map<number, number>();
function mark(): number {
  const t = performance.now();
  cpuAtMark.set(t, cpuSeconds(child.pid));
  return t;
}
const cpu = (from: number, to: number) => (cpuAtMark.get(to)! - cpuAtMark.get(from)!).toFixed(1);

const t0 = mark();
const nodes: SimulatedNode[] = [];
for (let i = 0; i < NODES; i++)
  nodes.push(
    new SimulatedNode({
      url,
      token: TOKENS.nodeToken,
      nodeId: `sim-${i}`,
      heartbeatMs: 30_000,
      capacity: { init: 20, run: 60, postrun: 20 },
      runMs: () => null,
      imagesWarm: { [`img-${i % 10}`]: 2 },
      traceFrames: true,
    }),
  );
for (let i = 0; i < nodes.length; i += 100) await Promise.all(nodes.slice(i, i + 100).map((n) => n.connect()));
const tConnected = mark();
const connectMs = tConnected - t0;
await recordHeap("connected");

let received = 0;
let receivedBytes = 0;
const trainer = new TrainerClient({ url, token: TOKENS.trainerToken, trainerId: "bench", window: 512, onResult: () => void received++ });
await trainer.ready();

// ---- dispatch: 100k queued rollouts to 1,000 nodes ------------------------------------------
phase = "submit+dispatch";
const tSubmit = mark();
const submits: Promise<unknown>[] = [];
for (let g = 0; g < ROLLOUTS / GROUP_SIZE; g++) {
  submits.push(
    trainer.submit({
      task: { task_id: `bench-${g}`, instruction: "fix the bug", runtime: { image: `img-${g % 10}` } },
      n: GROUP_SIZE,
      agent: { harness: "mini" },
    }),
  );
}
await Promise.all(submits);
const tStored = mark();
const assigned = () => nodes.reduce((a, n) => a + n.received.length, 0);
await until(() => assigned() === ROLLOUTS, "all rollouts assigned");
const tDispatched = mark();
await recordHeap("dispatched");
const warmHits = nodes.reduce((a, n, i) => a + n.received.filter((r) => r.request.runtime?.image === `img-${i % 10}`).length, 0);

// ---- streaming with realistic traces ---------------------------------------------------------
phase = "stream-realistic";
// Count bytes as the trainer's socket receives them.
const originalOnResult = received;
const perNode = Math.ceil(REALISTIC / NODES);
const tStream = mark();
let released = 0;
for (const node of nodes) released += node.finishHeld(Math.min(perNode, REALISTIC - released), realisticResult);
await until(() => received - originalOnResult === released, "realistic results received");
const tStreamed = mark();
await recordHeap("streamed realistic");
const sample = nodes[0]!.received[0]!;
const realisticBytes = nodeResultFrame(sample.rollout_id, sample.attempt, realisticResult(sample))!.byteLength;
receivedBytes = released * realisticBytes;

// ---- the rest with small traces ---------------------------------------------------------------
phase = "stream-small";
const tSmall = mark();
for (const node of nodes) node.finishHeld();
await until(() => received === ROLLOUTS, "all results received");
const tDone = mark();
await recordHeap("streamed all");
phase = "idle";
await Bun.sleep(1000);
const endRss = rssMiB();
// Freed memory goes back to the OS once the coordinator is idle (a GC, then the allocator's scavenger).
await Bun.sleep(SETTLE_MS - 1000);
const settledRss = rssMiB();
clearInterval(sampler);
clearInterval(heapSampler);

const maxOf = (p: string) => Math.max(0, ...samples.filter((s) => s.phase === p).map((s) => s.rss));
const sec = (ms: number) => ms / 1000;
console.log(
  `machine: ${navigator.hardwareConcurrency} cores; nodes: ${NODES}; rollouts: ${ROLLOUTS}; realistic traces: ${released} × ${TRACE_TOKENS} tokens (~${(realisticBytes / 1024).toFixed(0)} KB a trace frame)`,
);
console.log(`| step | count | seconds | rate | coordinator CPU s |`);
console.log(`|---|---|---|---|---|`);
console.log(`| nodes connected | ${NODES} | ${sec(connectMs).toFixed(2)} | ${(NODES / sec(connectMs)).toFixed(0)} nodes/s | ${cpu(t0, tConnected)} |`);
console.log(
  `| groups stored (100 × 1,000) | ${ROLLOUTS} | ${sec(tStored - tSubmit).toFixed(2)} | ${(ROLLOUTS / sec(tStored - tSubmit)).toFixed(0)} rollouts/s | ${cpu(tSubmit, tStored)} |`,
);
console.log(
  `| dispatched after storing | ${ROLLOUTS} | ${sec(tDispatched - tStored).toFixed(2)} | ${(ROLLOUTS / sec(tDispatched - tStored)).toFixed(0)} dispatches/s | ${cpu(tStored, tDispatched)} |`,
);
console.log(
  `| submit → all dispatched | ${ROLLOUTS} | ${sec(tDispatched - tSubmit).toFixed(2)} | ${(ROLLOUTS / sec(tDispatched - tSubmit)).toFixed(0)} dispatches/s | ${cpu(tSubmit, tDispatched)} |`,
);
console.log(
  `| realistic results streamed | ${released} | ${sec(tStreamed - tStream).toFixed(2)} | ${(released / sec(tStreamed - tStream)).toFixed(0)} results/s, ${(receivedBytes / 1e6 / sec(tStreamed - tStream)).toFixed(1)} MB/s | ${cpu(tStream, tStreamed)} |`,
);
console.log(
  `| small results streamed | ${ROLLOUTS - released} | ${sec(tDone - tSmall).toFixed(2)} | ${((ROLLOUTS - released) / sec(tDone - tSmall)).toFixed(0)} results/s | ${cpu(tSmall, tDone)} |`,
);
console.log(
  `warm-image affinity: ${((warmHits / ROLLOUTS) * 100).toFixed(1)}% of assignments went to a node with that image warm (10 images, each warm on 1/10 of the nodes)`,
);
console.log(
  `coordinator RSS MiB: after connect ${Math.round(samples.find((s) => s.phase === "submit+dispatch")?.rss ?? 0)}, peak dispatching ${Math.round(maxOf("submit+dispatch"))}, peak streaming realistic ${Math.round(maxOf("stream-realistic"))}, peak streaming small ${Math.round(maxOf("stream-small"))}, end (1 s idle) ${Math.round(endRss)}, ${SETTLE_MS / 1000} s idle ${Math.round(settledRss)}, overall peak ${Math.round(peak)}`,
);
console.log(
  `coordinator JS heap used MiB: ${Object.entries(heapAt)
    .map(([k, v]) => `${k} ${Math.round(v)}`)
    .join(", ")}`,
);
console.log(
  `coordinator JS heap used MiB, most seen (every 2 s): ${Object.entries(heapPeak)
    .map(([k, v]) => `${k} ${Math.round(v)}`)
    .join(", ")}`,
);
console.log(`trainer: ${trainer.counts.results} results, ${trainer.counts.duplicates} duplicates dropped`);

trainer.close();
for (const n of nodes) n.kill();
child.kill("SIGTERM");
await child.exited;
rmSync(dir, { recursive: true, force: true });
process.exit(0);
