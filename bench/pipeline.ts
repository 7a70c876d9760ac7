// Why: the pipeline exists to keep the inference engine busy while sandboxes start, tasks are
// set up and tests run. This measures, in one run, the engine-busy fraction of the overlapped
// pipeline (node/pipeline, INIT ahead of RUN, POSTRUN beside it) against the same stages run one
// after another in each slot, and against a synchronous loop (a batch of slots starts together,
// the next batch waits for its slowest rollout), on the same workload.
//
//   bun bench/pipeline.ts [--rollouts 80] [--capacity 16] [--slots 20] [--scale 0.1] [--seed 1]
//
// The engine is the mock engine with its latency model set to real-GPU rates (Qwen3-8B class on
// one H100 at batch 16: ~200 ms to first token, ~20 ms per output token; 260 output tokens per
// turn, ~5.4 s). Stage durations (container start 1–3 s, setup 5–20 s, 10–40 agent turns with 0.2–2 s of
// tool execution after each, tests in a fresh container 1–3 s + 10–40 s) are drawn once per
// rollout from a seeded generator, and both modes run the same draws. Every duration is
// multiplied by --scale so a run takes a couple of minutes; fractions do not depend on it.
// Engine busy = time-average of min(LLM calls in flight, capacity) / capacity, i.e. how full the
// engine's batch is kept, over the whole run and over the steady part (until the last rollout
// has entered RUN, i.e. while work was still queued: what a continuous trainer sees).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { TaskRequest } from "../protocol/rollout.ts";
import { startMockEngine } from "../node/mock-engine/index.ts";
import { Pipeline } from "../node/pipeline/pipeline.ts";
import type { HarnessRunRequest } from "../node/pipeline/ports.ts";
import { newRollout, type Rollout } from "../node/pipeline/rollout.ts";
import { FakeGateway, fakeSandbox, sleep } from "../test/support/pipeline/fakes.ts";
import type { PoolEvent, Sandbox, SandboxPool } from "../node/runtime/types.ts";
import type { RuntimeSpec } from "../protocol/runtime.ts";
import { openNodeStore } from "../node/store/db.ts";
import { RolloutsRepo } from "../node/store/rollouts-repo.ts";

const { values } = parseArgs({
  options: { rollouts: { type: "string" }, capacity: { type: "string" }, slots: { type: "string" }, scale: { type: "string" }, seed: { type: "string" } },
});
const ROLLOUTS = Number(values.rollouts ?? 80);
const CAPACITY = Number(values.capacity ?? 16);
const SLOTS = Number(values.slots ?? 20);
const SCALE = Number(values.scale ?? 0.1);
const SEED = Number(values.seed ?? 1);

/** Real-GPU rates (ms) before scaling, and output tokens per agent turn. */
const TTFT_MS = 200;
const MS_PER_TOKEN = 20;
const TOKENS_PER_TURN = 260;
/**
 * The mock engine really generates a short answer (~20 tokens: little CPU on a shared machine);
 * the time of the other tokens goes into its time to first token, so a turn lasts what 260
 * tokens take on the GPU.
 */
const GENERATED_TOKENS = 20;

interface Draw {
  containerStartMs: number;
  setupMs: number;
  turns: number;
  toolMs: number[];
  evalStartMs: number;
  testsMs: number;
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function draws(): Draw[] {
  const r = rng(SEED);
  const between = (lo: number, hi: number) => (lo + (hi - lo) * r()) * SCALE;
  return Array.from({ length: ROLLOUTS }, () => {
    const turns = 10 + Math.floor(r() * 31);
    return {
      containerStartMs: between(1000, 3000),
      setupMs: between(5000, 20000),
      turns,
      toolMs: Array.from({ length: turns }, () => between(200, 2000)),
      evalStartMs: between(1000, 3000),
      testsMs: between(10000, 40000),
    };
  });
}

/** Integrates min(in flight, capacity) over time. */
class BusyMeter {
  readonly callMs: number[] = [];
  readonly toolMs: number[] = [];
  private inFlight = 0;
  private last = performance.now();
  private area = 0;
  readonly start = performance.now();
  steadyEnd: number | undefined;
  private steadyArea = 0;

  private advance(): void {
    const now = performance.now();
    this.area += Math.min(this.inFlight, CAPACITY) * (now - this.last);
    if (this.steadyEnd === undefined) this.steadyArea = this.area;
    this.last = now;
  }
  enter(): void {
    this.advance();
    this.inFlight++;
  }
  leave(): void {
    this.advance();
    this.inFlight--;
  }
  markSteadyEnd(): void {
    this.advance();
    this.steadyEnd ??= performance.now();
  }
  result(): { wall_s: number; busy: number; steady_busy: number; call_ms: number; tool_ms: number } {
    this.advance();
    const wall = this.last - this.start;
    const steady = (this.steadyEnd ?? this.last) - this.start;
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    return {
      wall_s: wall / 1000,
      busy: this.area / (CAPACITY * wall),
      steady_busy: this.steadyArea / (CAPACITY * steady),
      call_ms: mean(this.callMs),
      tool_ms: mean(this.toolMs),
    };
  }
}

async function agentTurns(engineUrl: string, draw: Draw, meter: BusyMeter, signal?: AbortSignal): Promise<void> {
  for (let turn = 0; turn < draw.turns; turn++) {
    const t0 = performance.now();
    meter.enter();
    try {
      const res = await fetch(`${engineUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "Qwen/Qwen3-8B", messages: [{ role: "user", content: `turn ${turn}` }], max_tokens: 1024 }),
        ...(signal ? { signal } : {}),
      });
      await res.json();
    } finally {
      meter.leave();
      meter.callMs.push(performance.now() - t0);
    }
    const t1 = performance.now();
    await sleep(draw.toolMs[turn]!, signal);
    meter.toolMs.push(performance.now() - t1);
  }
}

/** Each slot runs its rollouts' stages one after another: container, setup, agent, tests. */
async function sequential(engineUrl: string, all: Draw[]): Promise<ReturnType<BusyMeter["result"]>> {
  const meter = new BusyMeter();
  let next = 0;
  let entered = 0;
  await Promise.all(
    Array.from({ length: SLOTS }, async () => {
      for (let i = next++; i < all.length; i = next++) {
        const d = all[i]!;
        await sleep(d.containerStartMs + d.setupMs);
        if (++entered === all.length) meter.markSteadyEnd();
        await agentTurns(engineUrl, d, meter);
        await sleep(d.evalStartMs + d.testsMs);
      }
    }),
  );
  return meter.result();
}

/** A synchronous loop: a batch of `SLOTS` rollouts starts together and the next waits for its slowest. */
async function batched(engineUrl: string, all: Draw[]): Promise<ReturnType<BusyMeter["result"]>> {
  const meter = new BusyMeter();
  for (let start = 0; start < all.length; start += SLOTS) {
    const batch = all.slice(start, start + SLOTS);
    if (start + SLOTS >= all.length) meter.markSteadyEnd();
    await Promise.all(
      batch.map(async (d) => {
        await sleep(d.containerStartMs + d.setupMs);
        await agentTurns(engineUrl, d, meter);
        await sleep(d.evalStartMs + d.testsMs);
      }),
    );
  }
  return meter.result();
}

/** The real pipeline with ports whose stages take the drawn durations. */
async function overlapped(engineUrl: string, all: Draw[]): Promise<ReturnType<BusyMeter["result"]>> {
  const meter = new BusyMeter();
  const drawOf = new Map<string, Draw>();
  const store = await openNodeStore(join(mkdtempSync(join(tmpdir(), "polar-bench-pipe-")), "node.db"));
  const repo = new RolloutsRepo(store.db);
  const gateway = new FakeGateway();
  let sandboxes = 0;
  const pool: SandboxPool = {
    async take(spec: RuntimeSpec, labels, signal) {
      const d = drawOf.get(labels.rollout_id)!;
      // The second take of a rollout is its fresh evaluation sandbox.
      await sleep(d.containerStartMs, signal);
      return fakeSandbox(spec, `${labels.rollout_id}#${sandboxes++}`);
    },
    release: (s: Sandbox) => s.destroy(),
    setDemand: () => {},
    warm: () => ({}),
    onEvent: (_l: (e: PoolEvent) => void) => () => {},
    close: async () => {},
  };
  let entered = 0;
  const rolloutOfSandbox = (s: Sandbox) => s.id.split("#")[0]!;
  const pipeline = new Pipeline(
    { nodeId: "bench", initWorkers: 8, runWorkers: SLOTS, postrunWorkers: 16, readyBacklog: 8 },
    {
      store: repo,
      pool,
      gateway,
      preparer: { prepare: (s, _a, signal) => sleep(drawOf.get(rolloutOfSandbox(s))!.setupMs, signal) },
      runner: {
        async run(req: HarnessRunRequest) {
          if (++entered === all.length) meter.markSteadyEnd();
          const t0 = performance.now();
          await agentTurns(engineUrl, drawOf.get(rolloutOfSandbox(req.sandbox))!, meter, req.signal);
          return { exit_code: 0, timed_out: false, final_output: "", duration_ms: performance.now() - t0 };
        },
      },
      // Like node/eval's evaluators: a fresh sandbox from the pool, the task prepared in it, the tests.
      evaluator: {
        async evaluate(req) {
          const draw = drawOf.get(rolloutOfSandbox(req.agentSandbox))!;
          const sandbox = await pool.take(req.agentSandbox.spec, { rollout_id: req.rolloutId }, req.signal);
          try {
            await sleep(draw.setupMs, req.signal);
            await sleep(draw.testsMs, req.signal);
            return { reward: 1, detail: {} };
          } finally {
            await pool.release(sandbox);
          }
        },
      },
      onResult: () => {},
    },
  );
  const request = TaskRequest.parse({ task_id: "bench", instruction: "x", agent: { harness: "mini" }, num_samples: all.length, timeout_seconds: 36_000 });
  const rollouts: Rollout[] = all.map((d, i) => {
    const r = newRollout({ id: `r${i}`, taskId: "bench", sampleIndex: i, request, harness: "mini", strategy: "per-call" });
    drawOf.set(r.id, d);
    return r;
  });
  await repo.createTask(
    "bench",
    request,
    rollouts.map((r) => ({ id: r.id, sampleIndex: r.sampleIndex, priority: 0 })),
  );
  for (const r of rollouts) pipeline.submit(r);
  const samples: { run: number; ready: number; init: number; queued: number }[] = [];
  const sampler = setInterval(() => {
    const m = pipeline.metrics();
    samples.push({ run: m.run_inflight, ready: m.ready_depth, init: m.init_inflight, queued: m.init_queue_depth });
  }, 50);
  await Promise.all(rollouts.map((r) => pipeline.settled(r.id)));
  clearInterval(sampler);
  const steadySamples = samples.filter((x) => x.queued > 0);
  const avg = (k: "run" | "ready" | "init") => (steadySamples.reduce((a, x) => a + x[k], 0) / Math.max(1, steadySamples.length)).toFixed(1);
  console.log(`overlapped while rollouts were queued: run slots in use ${avg("run")} of ${SLOTS}, READY ${avg("ready")}, INIT ${avg("init")}`);
  const result = meter.result();
  await pipeline.close();
  store.close();
  return result;
}

const engine = await startMockEngine({
  port: 0,
  ttftMs: (TTFT_MS + (TOKENS_PER_TURN - GENERATED_TOKENS) * MS_PER_TOKEN) * SCALE,
  msPerToken: MS_PER_TOKEN * SCALE,
  script: { steps: [{ think: "Next I run the tests again.", text: "Running the next command." }] },
});
try {
  const all = draws();
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  console.log(`pipeline bench: ${ROLLOUTS} rollouts, engine capacity ${CAPACITY}, ${SLOTS} run slots, time scale ${SCALE}, seed ${SEED}`);
  const over = await overlapped(engine.url, all);
  console.log(
    `overlapped  wall ${over.wall_s.toFixed(1)} s  engine busy ${pct(over.busy)} (steady ${pct(over.steady_busy)})  mean LLM call ${over.call_ms.toFixed(0)} ms, tool ${over.tool_ms.toFixed(0)} ms`,
  );
  const seq = await sequential(engine.url, all);
  console.log(
    `sequential  wall ${seq.wall_s.toFixed(1)} s  engine busy ${pct(seq.busy)} (steady ${pct(seq.steady_busy)})  mean LLM call ${seq.call_ms.toFixed(0)} ms, tool ${seq.tool_ms.toFixed(0)} ms`,
  );
  const batch = await batched(engine.url, all);
  console.log(
    `batched     wall ${batch.wall_s.toFixed(1)} s  engine busy ${pct(batch.busy)} (steady ${pct(batch.steady_busy)})  mean LLM call ${batch.call_ms.toFixed(0)} ms, tool ${batch.tool_ms.toFixed(0)} ms`,
  );
  console.log(`wall: sequential / overlapped ×${(seq.wall_s / over.wall_s).toFixed(2)}, batched / overlapped ×${(batch.wall_s / over.wall_s).toFixed(2)}`);
} finally {
  await engine.stop();
}
