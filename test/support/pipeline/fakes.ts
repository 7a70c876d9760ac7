// Why: the pipeline's scheduling, timeouts, cancellation and failure naming are tested against
// these scripted stand-ins of its ports (real parts are exercised by the end-to-end tests);
// each records what it was asked so tests assert on it.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RuntimeSpec } from "../../../protocol/runtime.ts";
import { NORMALISATION_KINDS, SPLIT_CAUSES, type Strategy, type Trace, type TrajectoryResult } from "../../../protocol/trace.ts";
import type { PoolEvent, Sandbox, SandboxPool } from "../../../node/runtime/types.ts";
import type {
  Evaluation,
  EvaluationRequest,
  GatewaySession,
  GatewaySessions,
  HarnessRunOutcome,
  HarnessRunRequest,
  HarnessRunner,
  RolloutEvaluator,
  SandboxPreparer,
} from "../../../node/pipeline/ports.ts";

const zeros = <K extends string>(keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

/** Resolves after `ms`, or rejects with the signal's reason when aborted first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

export function fakeSandbox(spec: RuntimeSpec, id: string): Sandbox & { destroyed: boolean } {
  const unused = () => Promise.reject(new Error("not used by the pipeline"));
  const dir = mkdtempSync(join(tmpdir(), "polar-fake-sbx-"));
  const sandbox = {
    id,
    backend: "process" as const,
    spec,
    hostRunDir: join(dir, "run"),
    hostGatewayDir: join(dir, "gateway"),
    destroyed: false,
    exec: unused,
    putFiles: unused,
    putDirectory: unused,
    putArchive: unused,
    readFile: unused,
    getArchive: unused,
    alive: async () => !sandbox.destroyed,
    destroy: async () => {
      sandbox.destroyed = true;
    },
  };
  return sandbox;
}

export class FakePool implements SandboxPool {
  taken: (Sandbox & { destroyed: boolean })[] = [];
  demand: { image: string; queued: number }[] = [];
  startMs = 5;
  failTake: Error | null = null;
  private next = 0;

  async take(spec: RuntimeSpec, _labels: { rollout_id: string }, signal?: AbortSignal): Promise<Sandbox> {
    await sleep(this.startMs, signal);
    if (this.failTake) throw this.failTake;
    const sandbox = fakeSandbox(spec, `sbx-${this.next++}`);
    this.taken.push(sandbox);
    return sandbox;
  }
  async release(sandbox: Sandbox): Promise<void> {
    await sandbox.destroy();
  }
  setDemand(spec: RuntimeSpec, queued: number): void {
    this.demand.push({ image: spec.image, queued });
  }
  warm(): Record<string, number> {
    return {};
  }
  onEvent(_listener: (event: PoolEvent) => void): () => void {
    return () => {};
  }
  async close(): Promise<void> {}
  leftovers(): number {
    return this.taken.filter((s) => !s.destroyed).length;
  }
}

export class FakePreparer implements SandboxPreparer {
  ms = 5;
  fail: Error | null = null;
  async prepare(_sandbox: Sandbox, _actions: unknown, signal: AbortSignal): Promise<void> {
    await sleep(this.ms, signal);
    if (this.fail) throw this.fail;
  }
}

/** A trace of `sampled` trainable tokens after a 3-token prompt. */
export function fakeTrace(sampled: number, strategy: Strategy): Trace {
  return {
    prompt_ids: [1, 2, 3],
    response_ids: [...Array.from({ length: sampled }, (_, i) => 100 + i), 7],
    loss_mask: [...Array.from({ length: sampled }, () => 1 as const), 0],
    logprobs: [...Array.from({ length: sampled }, () => -0.25), null],
    calls: [0],
    call_context_drift: [0],
    policy_versions: [0],
    finish_reason: "stop",
    strategy,
    stats: {
      trainable_tokens: sampled,
      trainable_exactly_sampled: sampled,
      logprob_coverage: 1,
      normalisations: zeros(NORMALISATION_KINDS),
      context_exact_calls: 1,
      context_drift_tokens: 0,
    },
  };
}

export class FakeGateway implements GatewaySessions {
  opened: string[] = [];
  closed = new Set<string>();
  engineFailureCount = 0;
  /** Calls "recorded" per session (the fake runner adds one per turn). */
  calls = new Map<string, number>();
  private next = 0;

  async open(input: { rolloutId: string }): Promise<GatewaySession> {
    const id = `gw-${this.next++}-${input.rolloutId}`;
    this.opened.push(id);
    this.calls.set(id, 0);
    return { id, endpoint: { openaiBaseUrl: "http://127.0.0.1:1/v1", anthropicBaseUrl: "http://127.0.0.1:1", token: `tok-${id}` } };
  }
  async close(sessionId: string): Promise<void> {
    this.closed.add(sessionId);
  }
  async trajectory(sessionId: string, strategy: Strategy): Promise<TrajectoryResult> {
    const n = this.calls.get(sessionId) ?? 0;
    const traces = n > 0 ? [fakeTrace(n, strategy)] : [];
    return {
      traces,
      stats: {
        strategy,
        call_count: n,
        calls_used: n,
        skipped: [],
        trace_count: traces.length,
        splits: [],
        split_counts: zeros(SPLIT_CAUSES),
        normalisations: zeros(NORMALISATION_KINDS),
        total_tokens: traces.length ? 4 + n : 0,
        trainable_tokens: n,
        trainable_exactly_sampled: n,
        logprob_coverage: 1,
        context_exact_calls: traces.length,
        context_drift_tokens: 0,
        rebuild_ms: 0,
      },
    };
  }
  async engineFailures(): Promise<number> {
    return this.engineFailureCount;
  }
}

/** Scripted harness: `turns` recorded calls, `turnMs` apart, then exit `exitCode`; stops when aborted. */
export class FakeRunner implements HarnessRunner {
  turns = 3;
  turnMs = 5;
  exitCode = 0;
  started: string[] = [];
  /** Per-rollout override: return a promise to hold that rollout in RUN. */
  hold: ((request: HarnessRunRequest) => Promise<void> | undefined) | null = null;

  constructor(private readonly gateway: FakeGateway) {}

  async run(request: HarnessRunRequest): Promise<HarnessRunOutcome> {
    this.started.push(request.session.id);
    const t0 = performance.now();
    try {
      for (let i = 0; i < this.turns; i++) {
        await sleep(this.turnMs, request.signal);
        this.gateway.calls.set(request.session.id, (this.gateway.calls.get(request.session.id) ?? 0) + 1);
      }
      const held = this.hold?.(request);
      if (held) await Promise.race([held, sleep(1e9, request.signal)]);
    } catch {
      return { exit_code: null, timed_out: true, final_output: "", duration_ms: performance.now() - t0 };
    }
    return { exit_code: this.exitCode, timed_out: false, final_output: "done", duration_ms: performance.now() - t0 };
  }
}

/** Takes a fresh sandbox of its own from the pool and releases it, as node/eval's evaluators do. */
export class FakeEvaluator implements RolloutEvaluator {
  ms = 5;
  crash: Error | null = null;
  evaluated: string[] = [];
  /** Reward by sample: the instruction carries no sample index, so tests key by call order. */
  rewards: number[] = [];

  constructor(private readonly pool: SandboxPool) {}

  async evaluate(request: EvaluationRequest): Promise<Evaluation> {
    const sandbox = await this.pool.take(request.agentSandbox.spec, { rollout_id: request.rolloutId }, request.signal);
    try {
      await sleep(this.ms, request.signal);
      if (this.crash) throw this.crash;
      const reward = this.rewards[this.evaluated.length % Math.max(1, this.rewards.length)] ?? 1;
      this.evaluated.push(request.agentSandbox.id);
      return { reward, detail: { tests_passed: reward === 1, sandbox_id: sandbox.id } };
    } finally {
      await this.pool.release(sandbox);
    }
  }
}
