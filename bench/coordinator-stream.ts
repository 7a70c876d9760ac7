// Why: issue 18 asks for ≥ 10 M tokens/s from nodes through the coordinator's store to one
// trainer, measured before and after binary trace frames in one run. This streams the same
// realistic results through three coordinators one after another — the baseline commit's (JSON
// only), this tree's with JSON nodes and a JSON trainer (what old clients get now), and this
// tree's with trace-frame nodes and a binary trainer — at each trace size, and reports tokens/s,
// the coordinator's CPU per result, its RSS through the stream, and that every result arrived
// once with its tokens intact.
//
//   bun bench/coordinator.ts --compare [--baseline /work/wt/baseline-main] [--trace-tokens 4000,100000] [--results 4000,200] [--stream-nodes 50]
//
// Each coordinator is its own process (`polar coordinator` of that checkout, SQLite file in a
// temp folder); the nodes (simulated, in this process, holding every assignment until released)
// and the trainer (the TypeScript client, credit window 512, acknowledging each result) are the
// modules of that same checkout, so the baseline runs its own protocol. Results are released in a
// closed loop: at most ~32 MB of JSON-sized results in flight between the nodes and the trainer.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { cpuSeconds, rssBytes } from "./process-helpers.ts";

const { values } = parseArgs({
  strict: false,
  options: { baseline: { type: "string" }, "trace-tokens": { type: "string" }, results: { type: "string" }, "stream-nodes": { type: "string" } },
});
const BASELINE = resolve(String(values.baseline ?? "/work/wt/baseline-main"));
const HERE = resolve(import.meta.dir, "..");
const SIZES = String(values["trace-tokens"] ?? "4000,100000")
  .split(",")
  .map(Number);
const COUNTS = String(values.results ?? "4000,200")
  .split(",")
  .map(Number);
const NODES = Number(values["stream-nodes"] ?? 50);
const IN_FLIGHT_BYTES = 32e6;

interface Variant {
  name: string;
  root: string;
  /** Nodes send trace frames; the trainer asks for binary (ignored by a checkout without them). */
  binary: boolean;
}
const VARIANTS: Variant[] = [
  { name: "before: baseline a69cf43, JSON", root: BASELINE, binary: false },
  { name: "this tree, JSON nodes + JSON trainer", root: HERE, binary: false },
  { name: "after: trace frames + binary trainer", root: HERE, binary: true },
];

interface Row {
  tokens: number;
  variant: string;
  results: number;
  seconds: number;
  cpuMsPerResult: number;
  /** This process's: the simulated nodes encoding, the trainer client decoding. */
  benchCpuMsPerResult: number;
  /** RSS MiB when the stream starts, at each quarter of the results received, and 1 s after the last. */
  rss: { quarters: number[]; peak: number; end: number };
  lost: number;
  repeated: number;
  corrupted: number;
}

/** One trace of `tokens` tokens (3/4 prompt): random ids, a mask with every 7th token 0, logprobs (null where masked). */
function traceOf(tokens: number): Record<string, unknown> {
  const promptLen = Math.floor(tokens * 0.75);
  const responseLen = tokens - promptLen;
  const id = () => 100 + Math.floor(Math.random() * 150_000);
  const loss_mask = Array.from({ length: responseLen }, (_, i) => (i % 7 === 6 ? 0 : 1));
  return {
    prompt_ids: Array.from({ length: promptLen }, id),
    response_ids: Array.from({ length: responseLen }, id),
    loss_mask,
    response_logprobs: loss_mask.map((m) => (m === 1 ? -Math.random() * 3 : 0)),
    finish_reason: "stop",
    reward: 1,
    metadata: { policy_versions: [0] },
  };
}

const sameArray = (a: unknown, b: unknown[]) => Array.isArray(a) && a.length === b.length && a.every((x, i) => x === b[i]);

async function streamOnce(variant: Variant, tokens: number, count: number): Promise<Row> {
  const { PolarProcesses } = await import(join(variant.root, "test/helpers/polar-processes.ts"));
  // Test support lives in test/support/ since the rooms move; older checkouts keep it in coordinator/testing/.
  const support = existsSync(join(variant.root, "test/support/coordinator")) ? "test/support/coordinator" : "coordinator/testing";
  const { SimulatedNode, defaultResult } = await import(join(variant.root, support, "simulated-node.ts"));
  const { TrainerClient } = await import(join(variant.root, "clients/typescript/trainer-client.ts"));
  const { TOKENS } = await import(join(variant.root, support, "cluster.ts"));
  const dir = mkdtempSync(join(tmpdir(), "polar-bench-stream-"));
  const processes = new PolarProcesses();
  const { url, child } = await processes.coordinator({ db: join(dir, "c.db"), heartbeatMs: 30_000 });
  const trace = traceOf(tokens);
  const perNode = Math.ceil(count / NODES);
  const nodes: any[] = [];
  for (let i = 0; i < NODES; i++) {
    nodes.push(
      new SimulatedNode({
        url,
        token: TOKENS.nodeToken,
        nodeId: `sim-${i}`,
        heartbeatMs: 30_000,
        capacity: { init: perNode, run: perNode, postrun: perNode },
        runMs: () => null,
        traceFrames: variant.binary,
      }),
    );
  }
  await Promise.all(nodes.map((n) => n.connect()));

  const seen = new Set<string>();
  let received = 0;
  let corrupted = 0;
  let onReceived = () => {};
  const trainer = new TrainerClient({
    url,
    token: TOKENS.trainerToken,
    trainerId: "bench",
    window: 512,
    encoding: variant.binary ? "binary" : "json",
    onResult: (r: { rollout_id: string; traces: Record<string, unknown>[] }) => {
      received++;
      seen.add(r.rollout_id);
      const t = r.traces[0];
      // Every result's shape; the first and every 64th compared token by token.
      const intact =
        r.traces.length === 1 &&
        t &&
        (received % 64 !== 1 ||
          (["prompt_ids", "response_ids", "loss_mask", "response_logprobs"] as const).every((k) => sameArray(t[k], trace[k] as unknown[])));
      if (!intact || (t!.prompt_ids as unknown[]).length !== (trace.prompt_ids as unknown[]).length) corrupted++;
      onReceived();
    },
  });
  await trainer.ready();
  const submitted: string[] = [];
  for (let left = count; left > 0; left -= 1000) {
    const g = await trainer.submit({
      task: { task_id: `bench-${left}`, instruction: "fix the bug", runtime: { image: "img-0" } },
      n: Math.min(1000, left),
      agent: { harness: "mini" },
    });
    submitted.push(...g.rollout_ids);
  }
  const assigned = () => nodes.reduce((a, n) => a + n.received.length, 0);
  while (assigned() < count) await Bun.sleep(10);

  const make = (a: any) => {
    const base = defaultResult(a, 1, 1);
    base.trajectory.traces = [trace];
    return base;
  };
  const window = Math.max(8, Math.min(512, Math.floor(IN_FLIGHT_BYTES / (tokens * 12))));
  let released = 0;
  let next = 0;
  const release = () => {
    while (released < count && released - received < window) {
      for (let tries = 0; tries < NODES; tries++) {
        const n = nodes[next++ % NODES];
        if (n.finishHeld(1, make) === 1) {
          released++;
          break;
        }
      }
    }
  };
  const rssMiB = () => rssBytes(child.pid) / 1024 / 1024;
  const quarters = [rssMiB()];
  let peak = quarters[0]!;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB())), 250);
  const done = new Promise<void>((resolveDone) => {
    onReceived = () => {
      if (received % Math.ceil(count / 4) === 0 || received === count) quarters.push(rssMiB());
      if (received >= count) resolveDone();
      else release();
    };
  });
  const cpu0 = cpuSeconds(child.pid);
  const own0 = process.cpuUsage();
  const t0 = performance.now();
  release();
  const timeout = setTimeout(() => console.error(`still waiting: ${received}/${count}`), 600_000);
  await done;
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = cpuSeconds(child.pid);
  const own = process.cpuUsage(own0);
  clearTimeout(timeout);
  await Bun.sleep(1000); // late repeats would show up here
  clearInterval(sampler);
  const end = rssMiB();
  const lost = submitted.filter((id) => !seen.has(id)).length;
  const repeated = received - seen.size + trainer.counts.duplicates;
  trainer.close();
  for (const n of nodes) n.kill();
  child.kill("SIGTERM");
  await child.exited;
  rmSync(dir, { recursive: true, force: true });
  return {
    tokens,
    variant: variant.name,
    results: received,
    seconds,
    cpuMsPerResult: ((cpu1 - cpu0) * 1000) / count,
    benchCpuMsPerResult: (own.user + own.system) / 1000 / count,
    rss: { quarters: quarters.slice(0, 5), peak: Math.max(peak, ...quarters), end },
    lost,
    repeated,
    corrupted,
  };
}

const load = () =>
  (require("node:os") as typeof import("node:os"))
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");
console.log(`machine: ${navigator.hardwareConcurrency} cores, Bun ${Bun.version}; load average at start ${load()}; ${new Date().toISOString()}`);
console.log(`${NODES} simulated nodes; one trainer (window 512); baseline ${BASELINE}`);
console.log(
  `| tokens a trace | variant | results | seconds | results/s | M tokens/s | coordinator CPU ms/result | nodes + trainer CPU ms/result | coordinator RSS MiB: start, ¼, ½, ¾, all received; peak; 1 s after | lost | repeated | corrupted |`,
);
console.log(`|---|---|---|---|---|---|---|---|---|---|---|---|`);
for (const [i, tokens] of SIZES.entries()) {
  const count = COUNTS[i] ?? COUNTS.at(-1)!;
  for (const variant of VARIANTS) {
    const r = await streamOnce(variant, tokens, count);
    const rate = r.results / r.seconds;
    console.log(
      `| ${tokens} | ${r.variant} | ${r.results} | ${r.seconds.toFixed(2)} | ${rate.toFixed(0)} | ${((rate * tokens) / 1e6).toFixed(2)} | ${r.cpuMsPerResult.toFixed(2)} | ${r.benchCpuMsPerResult.toFixed(2)} | ${r.rss.quarters.map((q) => q.toFixed(0)).join(", ")}; ${r.rss.peak.toFixed(0)}; ${r.rss.end.toFixed(0)} | ${r.lost} | ${r.repeated} | ${r.corrupted} |`,
    );
  }
}
console.log(`load average at end ${load()}`);
