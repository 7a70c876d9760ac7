// Why: the overlapped rollout pipeline — each rollout moves QUEUED → INIT → READY → RUN →
// POSTRUN → terminal through stage gates with their own limits; INIT runs ahead of RUN capacity
// (prewarming, bounded by the READY backlog); queued demand per image drives the pool; every
// stop (cancel, early stop, task timeout) frees what the rollout holds at any stage; a result is
// stored before it is reported.
import type { SessionResult } from "../../protocol/rollout.ts";
import { RuntimeSpec, type RuntimeSpecInput } from "../../protocol/runtime.ts";
import { within } from "./abortable.ts";
import type { StoreHealth } from "../store/store-health.ts";
import { RolloutFailure, asRolloutFailure, completedResult, maskedResult, type FailureCause, type ScoredOutcome } from "./result.ts";
import { RolloutTransitions, type Rollout, type StopReason } from "./rollout.ts";
import { initStage, postrunStage, runStage, type StageDeps } from "./stages.ts";
import { StageGate } from "./stage-gate.ts";
import type { TerminalState } from "./states.ts";

export interface PipelineConfig {
  nodeId: string;
  initWorkers: number;
  runWorkers: number;
  postrunWorkers: number;
  /** Rollouts allowed READY (prepared, waiting for a run slot) beyond free run slots. */
  readyBacklog: number;
  /** Runtime fields every rollout starts from (a request's `runtime` overrides them). */
  defaultRuntime?: RuntimeSpecInput;
}

export interface PipelineDeps extends StageDeps {
  /** Told of every result, after it is stored (or, when the store refused it, with that failure). */
  onResult(result: SessionResult, rollout: Rollout): void;
  /** Told of every store write that failed (the node is unhealthy until writes succeed) and succeeded. */
  storeHealth?: StoreHealth;
}

/** Polar's NodeStageMetrics names. */
export interface StageMetrics {
  init_queue_depth: number;
  init_inflight: number;
  ready_depth: number;
  run_inflight: number;
  postrun_queue_depth: number;
  postrun_inflight: number;
}

const STOP_CAUSE: Record<StopReason, FailureCause> = { cancelled: "cancelled", early_stop: "early_stop", task_timeout: "task_timeout", shutdown: "shutdown" };
/** Bound on cleanup and on rebuilding a failed rollout's partial trajectory. */
const CLEANUP_LIMIT_MS = 10_000;

export class Pipeline {
  readonly transitions: RolloutTransitions;
  private readonly live = new Map<string, { rollout: Rollout; done: Promise<void> }>();
  private readyCount = 0;
  private readonly demand = new Map<string, { spec: RuntimeSpec; queued: number }>();
  private readonly initGate: StageGate<Rollout>;
  private readonly runGate: StageGate<Rollout>;
  private readonly postrunGate: StageGate<Rollout>;

  constructor(
    private readonly config: PipelineConfig,
    private readonly deps: PipelineDeps,
  ) {
    this.transitions = new RolloutTransitions(
      deps.store,
      undefined,
      (err, r) => void deps.storeHealth?.failed(err, "recording a rollout transition", { rollout_id: r.id, task_id: r.taskId }),
    );
    this.runGate = new StageGate((active) => active < config.runWorkers);
    this.initGate = new StageGate(
      (active) => active < config.initWorkers && active + this.readyCount < config.readyBacklog + Math.max(0, config.runWorkers - this.runGate.active),
    );
    this.postrunGate = new StageGate((active) => active < config.postrunWorkers);
    this.transitions.onTransition((r, from) => {
      if (r.state === "READY") this.readyCount++;
      if (from === "READY") this.readyCount--;
    });
  }

  /** Starts a stored, QUEUED rollout; resolves once it is queued. */
  submit(rollout: Rollout): void {
    const done = this.drive(rollout).finally(() => {
      this.live.delete(rollout.id);
      this.pump();
    });
    this.live.set(rollout.id, { rollout, done });
    this.pump();
  }

  /** Stops a live rollout at whatever stage it is in; false when it is not live. */
  stop(rolloutId: string, reason: StopReason): boolean {
    const entry = this.live.get(rolloutId);
    if (!entry) return false;
    const r = entry.rollout;
    if (r.abort.signal.aborted) return true;
    r.stopReason = reason;
    r.abort.abort(
      new RolloutFailure(STOP_CAUSE[reason], reason === "task_timeout" ? `the task timeout of ${r.request.timeout_seconds} s passed` : `stopped: ${reason}`),
    );
    return true;
  }

  /** Waits until a live rollout has finished (its result stored and reported). */
  async settled(rolloutId: string): Promise<void> {
    await this.live.get(rolloutId)?.done;
  }

  liveRollouts(): Rollout[] {
    return [...this.live.values()].map((e) => e.rollout);
  }

  metrics(): StageMetrics {
    return {
      init_queue_depth: this.initGate.waiting,
      init_inflight: this.initGate.active,
      ready_depth: this.readyCount,
      run_inflight: this.runGate.active,
      postrun_queue_depth: this.postrunGate.waiting,
      postrun_inflight: this.postrunGate.active,
    };
  }

  /** Stops every live rollout (their results are stored as shutdown errors) and waits for them. */
  async close(): Promise<void> {
    for (const id of this.live.keys()) this.stop(id, "shutdown");
    await Promise.all([...this.live.values()].map((e) => e.done));
  }

  private specOf(r: Rollout): RuntimeSpec {
    return RuntimeSpec.parse({ ...this.config.defaultRuntime, ...r.request.runtime });
  }

  private async drive(r: Rollout): Promise<void> {
    const spec = this.specOf(r);
    const signal = r.abort.signal;
    let taskTimer: ReturnType<typeof setTimeout> | undefined;
    let scored: ScoredOutcome | undefined;
    let failure: RolloutFailure | undefined;
    try {
      await this.withSlot(this.initGate, r, async () => {
        await this.transitions.move(r, "INIT");
        taskTimer = setTimeout(() => this.stop(r.id, "task_timeout"), r.request.timeout_seconds * 1000);
        await initStage(r, spec, this.deps);
        // READY before the INIT slot is freed, so the backlog bound never sees a gap.
        await this.transitions.move(r, "READY");
      });
      const taskDeadline = r.marks.init! + r.request.timeout_seconds * 1000;
      await this.withSlot(this.runGate, r, async () => {
        await this.transitions.move(r, "RUN");
        await runStage(r, this.deps, taskDeadline);
      });
      r.marks.postrunQueued = performance.now();
      scored = await this.withSlot(this.postrunGate, r, async () => {
        await this.transitions.move(r, "POSTRUN");
        return postrunStage(r, this.deps);
      });
    } catch (err) {
      failure = signal.aborted && signal.reason instanceof RolloutFailure ? signal.reason : asRolloutFailure(err, "internal");
    } finally {
      clearTimeout(taskTimer);
    }
    await this.finish(r, scored, failure);
  }

  private async withSlot<T>(gate: StageGate<Rollout>, r: Rollout, work: () => Promise<T>): Promise<T> {
    const pending = gate.acquire(r, r.request.dispatch_priority, r.abort.signal);
    this.pump();
    await pending;
    try {
      return await work();
    } finally {
      gate.release();
      this.pump();
    }
  }

  /** Frees what the rollout holds, stores its result, moves it to its terminal state, reports it. */
  private async finish(r: Rollout, scored: ScoredOutcome | undefined, failure: RolloutFailure | undefined): Promise<void> {
    // A write of the node's store failed while this rollout ran (one of its LLM calls may not be
    // recorded): what it produced cannot be trusted as recorded, so it is the infrastructure's failure.
    const storeFailed = !failure && r.marks.init !== undefined ? this.deps.storeHealth?.failedSince(r.marks.init) : null;
    if (storeFailed) failure = new RolloutFailure("store", `the node's store refused a write while this rollout ran: ${storeFailed.description}`);
    const partial =
      failure && r.session && !["cancelled", "early_stop", "shutdown"].includes(failure.failureCause)
        ? (r.trajectory ?? (await within(this.deps.gateway.trajectory(r.session.id, r.strategy), CLEANUP_LIMIT_MS)) ?? null)
        : null;
    const t0 = performance.now();
    await this.cleanup(r);
    r.timing.runtime_stop_ms = performance.now() - t0;
    r.marks.done = performance.now();
    let result =
      scored && !failure
        ? completedResult(r, this.config.nodeId, scored)
        : maskedResult(r, this.config.nodeId, failure ?? new RolloutFailure("internal", "no outcome"), partial);
    try {
      await this.deps.store.saveResult(r.id, r.taskId, result.status, result);
      this.deps.storeHealth?.succeeded();
    } catch (err) {
      // The store refused the result (a full disk): the rollout fails as the infrastructure's, its
      // work masked; the short masked result may still fit, and is reported either way.
      this.deps.storeHealth?.failed(err, "saving a rollout result", { rollout_id: r.id, task_id: r.taskId });
      failure = asRolloutFailure(err, "store");
      result = maskedResult(r, this.config.nodeId, failure, null);
      await this.deps.store.saveResult(r.id, r.taskId, result.status, result).catch(() => undefined);
    }
    // The terminal move is announced even when its store write fails (reported as above).
    await this.transitions
      .move(r, terminalState(failure), failure ? { cause: failure.failureCause, message: failure.message } : { reward: scored?.reward })
      .catch(() => undefined);
    this.deps.onResult(result, r);
  }

  private async cleanup(r: Rollout): Promise<void> {
    const work: Promise<unknown>[] = [];
    if (r.session) work.push(this.deps.gateway.close(r.session.id));
    if (r.sandbox) work.push(this.deps.pool.release(r.sandbox));
    await within(Promise.allSettled(work), CLEANUP_LIMIT_MS);
  }

  /** Admits waiting rollouts to every stage the limits allow, then updates the pool's demand. */
  private pump(): void {
    // Admitting to RUN frees READY backlog, which may admit more to INIT.
    for (let moved = 1; moved > 0;) moved = this.postrunGate.pump() + this.runGate.pump() + this.initGate.pump();
    this.updateDemand();
  }

  private updateDemand(): void {
    const queued = new Map<string, { spec: RuntimeSpec; queued: number }>();
    for (const r of this.initGate.waitingItems()) {
      const spec = this.specOf(r);
      const key = `${spec.backend ?? ""}|${spec.image}`;
      const entry = queued.get(key) ?? { spec, queued: 0 };
      entry.queued++;
      queued.set(key, entry);
    }
    for (const [key, before] of this.demand) if (!queued.has(key)) queued.set(key, { spec: before.spec, queued: 0 });
    for (const [key, now] of queued) {
      if (this.demand.get(key)?.queued === now.queued) continue;
      this.deps.pool.setDemand(now.spec, now.queued);
      if (now.queued === 0) this.demand.delete(key);
      else this.demand.set(key, now);
    }
  }
}

function terminalState(failure: RolloutFailure | undefined): TerminalState {
  if (!failure) return "COMPLETED";
  if (failure.failureCause === "task_timeout") return "TIMEOUT";
  if (["cancelled", "early_stop", "shutdown"].includes(failure.failureCause)) return "CANCELLED";
  return "ERROR";
}
