// Why: a container start plus task setup costs seconds while GPUs wait, so sandboxes are started
// before rollouts need them. Per pool key (image + runtime options) the pool keeps as many ready
// as rollouts are queued (capped), refills in the background under a cap on concurrent starts
// (starts are CPU-bound), checks liveness before handing one out (a sandbox killed from outside
// is destroyed and replaced, never handed out), never reuses one, and destroys everything on
// close. Optionally it also runs the task's prepare actions before hand-out. It works over any
// SandboxRuntime (docker, process).
import { createHash } from "node:crypto";
import { asPolarError, PolarError } from "../../protocol/errors.ts";
import { prepareSandbox } from "./prepare.ts";
import { StartGate } from "./start-gate.ts";
import { RuntimeSpec, type Mount, type PoolEvent, type Sandbox, type SandboxPool, type SandboxRuntime } from "./types.ts";

export interface PoolOptions {
  runtime: SandboxRuntime;
  nodeId: string;
  /** Mounted into every sandbox (harness CLIs, Node.js). */
  mounts?: Mount[];
  /** Most ready sandboxes per key, whatever the demand; default 8. */
  maxReadyPerKey?: number;
  /** Sandboxes starting at once across all keys; default 2. */
  maxConcurrentStarts?: number;
  /** How often ready sandboxes are checked alive in the background (0: never); default 10 s. */
  healthCheckMs?: number;
  /** First wait after a failed background start of a key, doubled per failure up to 30 s; default 1 s. */
  retryDelayMs?: number;
  /**
   * Run the spec's prepare actions in the pool, before hand-out (one pool per task: the n samples
   * of a group share it); take() then returns prepared sandboxes. Default false: one pool per
   * image and options, and the caller prepares after take().
   */
  prepareInPool?: boolean;
}

const MAX_RETRY_DELAY_MS = 30_000;

/** JSON with object keys sorted at every depth, so equal specs hash equally. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** What decides how a pooled sandbox is made: the spec, with its prepare actions only if the pool runs them. */
export function poolKey(spec: RuntimeSpec, withPrepare = false): string {
  const { prepare, ...creation } = spec;
  const hash = createHash("sha256")
    .update(canonicalJson(withPrepare ? { ...creation, prepare } : creation))
    .digest("hex")
    .slice(0, 12);
  return `${spec.image}#${hash}`;
}

interface KeyState {
  key: string;
  spec: RuntimeSpec;
  ready: Sandbox[];
  starting: number;
  demand: number;
  failures: number;
  retryAt: number;
}

export class Pool implements SandboxPool {
  private readonly keys = new Map<string, KeyState>();
  private readonly leased = new Map<string, { sandbox: Sandbox; key: string }>();
  private readonly listeners = new Set<(event: PoolEvent) => void>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly gate: StartGate;
  private readonly maxReady: number;
  private readonly retryDelayMs: number;
  private readonly healthTimer: ReturnType<typeof setInterval> | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: PoolOptions) {
    this.gate = new StartGate(options.maxConcurrentStarts ?? 2);
    this.maxReady = options.maxReadyPerKey ?? 8;
    this.retryDelayMs = options.retryDelayMs ?? 1_000;
    const every = options.healthCheckMs ?? 10_000;
    if (every > 0) {
      this.healthTimer = setInterval(() => void this.checkReady(), every);
      this.healthTimer.unref?.();
    }
  }

  onEvent(listener: (event: PoolEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: PoolEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  private state(spec: RuntimeSpec): KeyState {
    const withPrepare = this.options.prepareInPool === true;
    const key = poolKey(spec, withPrepare);
    let state = this.keys.get(key);
    if (!state) {
      state = { key, spec: withPrepare ? spec : { ...spec, prepare: [] }, ready: [], starting: 0, demand: 0, failures: 0, retryAt: 0 };
      this.keys.set(key, state);
    }
    return state;
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work)).catch(() => undefined);
    return work;
  }

  /** Creates one sandbox under the start gate; emits started or failed. */
  private async start(state: KeyState, urgent: boolean, rolloutId?: string): Promise<Sandbox> {
    const release = await this.gate.acquire(urgent);
    const started = performance.now();
    try {
      if (this.closing) throw new PolarError("internal", "sandbox pool is closed");
      const labels = rolloutId ? { node_id: this.options.nodeId, rollout_id: rolloutId } : { node_id: this.options.nodeId };
      const sandbox = await this.options.runtime.create({ spec: state.spec, labels, mounts: this.options.mounts });
      await prepareSandbox(sandbox, state.spec.prepare).catch(async (err) => {
        await sandbox.destroy().catch(() => undefined);
        throw err;
      });
      this.emit({ type: "started", key: state.key, sandbox_id: sandbox.id, duration_ms: Math.round(performance.now() - started) });
      return sandbox;
    } catch (err) {
      this.emit({ type: "failed", key: state.key, error: asPolarError(err).message, duration_ms: Math.round(performance.now() - started) });
      throw err;
    } finally {
      release();
    }
  }

  private async destroy(key: string, sandbox: Sandbox, reason: string): Promise<void> {
    const started = performance.now();
    await sandbox.destroy().catch(() => undefined);
    this.emit({ type: "destroyed", key, sandbox_id: sandbox.id, reason, duration_ms: Math.round(performance.now() - started) });
  }

  /** Starts background sandboxes until ready + starting reaches the key's target. */
  private refill(state: KeyState): void {
    if (this.closing) return;
    const target = Math.min(state.demand, this.maxReady);
    if (Date.now() < state.retryAt) return this.scheduleRetry(state.retryAt);
    while (state.ready.length + state.starting < target) {
      state.starting++;
      const work = this.start(state, false).then(
        async (sandbox) => {
          state.starting--;
          state.failures = 0;
          if (this.closing) return this.destroy(state.key, sandbox, "closed");
          state.ready.push(sandbox);
          this.trim(state);
        },
        () => {
          state.starting--;
          state.failures++;
          state.retryAt = Date.now() + Math.min(this.retryDelayMs * 2 ** (state.failures - 1), MAX_RETRY_DELAY_MS);
          this.scheduleRetry(state.retryAt);
        },
      );
      this.track(work);
    }
  }

  private scheduleRetry(at: number): void {
    if (this.retryTimer || this.closing) return;
    this.retryTimer = setTimeout(
      () => {
        this.retryTimer = undefined;
        for (const state of this.keys.values()) this.refill(state);
      },
      Math.max(at - Date.now(), 0),
    );
    this.retryTimer.unref?.();
  }

  /** Destroys ready sandboxes above the key's target (demand went down). */
  private trim(state: KeyState): void {
    const target = Math.min(state.demand, this.maxReady);
    while (state.ready.length > target) {
      const surplus = state.ready.shift() as Sandbox;
      this.track(this.destroy(state.key, surplus, "surplus"));
    }
  }

  /** Checks every ready sandbox; dead ones are destroyed and replaced. */
  async checkReady(): Promise<number> {
    let dead = 0;
    for (const state of this.keys.values()) {
      for (const sandbox of [...state.ready]) {
        if (await sandbox.alive()) continue;
        const at = state.ready.indexOf(sandbox);
        if (at < 0) continue; // taken meanwhile
        state.ready.splice(at, 1);
        dead++;
        await this.track(this.destroy(state.key, sandbox, "dead"));
      }
      this.refill(state);
    }
    return dead;
  }

  async take(input: RuntimeSpec, labels: { rollout_id: string }, signal?: AbortSignal): Promise<Sandbox> {
    if (this.closing) throw new PolarError("internal", "sandbox pool is closed");
    const started = performance.now();
    const state = this.state(RuntimeSpec.parse(input));
    // A taken sandbox answers one queued rollout.
    state.demand = Math.max(state.demand - 1, 0);
    let sandbox: Sandbox | undefined;
    let warm = false;
    while (!sandbox && state.ready.length > 0) {
      const candidate = state.ready.shift() as Sandbox;
      if (await candidate.alive()) {
        sandbox = candidate;
        warm = true;
      } else {
        this.track(this.destroy(state.key, candidate, "dead"));
      }
    }
    this.refill(state);
    if (!sandbox) {
      signal?.throwIfAborted();
      sandbox = await this.track(this.start(state, true, labels.rollout_id));
    }
    if (signal?.aborted || this.closing) {
      await this.destroy(state.key, sandbox, signal?.aborted ? "aborted" : "closed");
      throw new PolarError("internal", signal?.aborted ? "take aborted" : "sandbox pool is closed");
    }
    this.leased.set(sandbox.id, { sandbox, key: state.key });
    this.emit({ type: "taken", key: state.key, sandbox_id: sandbox.id, warm, duration_ms: Math.round(performance.now() - started) });
    return sandbox;
  }

  async release(sandbox: Sandbox): Promise<void> {
    const lease = this.leased.get(sandbox.id);
    this.leased.delete(sandbox.id);
    await this.destroy(lease?.key ?? poolKey(sandbox.spec, this.options.prepareInPool), sandbox, "released");
  }

  setDemand(input: RuntimeSpec, queued: number): void {
    const state = this.state(RuntimeSpec.parse(input));
    state.demand = Math.max(Math.floor(queued), 0);
    this.trim(state);
    this.refill(state);
  }

  /** Sandboxes starting per pool key (metrics, the dashboard). */
  starting(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [key, state] of this.keys) if (state.starting > 0) out[key] = state.starting;
    return out;
  }

  warm(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const [key, state] of this.keys) counts[key] = state.ready.length;
    return counts;
  }

  /** Stops refilling, waits for starts in flight, destroys every ready and handed-out sandbox. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.healthTimer);
      clearTimeout(this.retryTimer);
      this.gate.close();
      await Promise.allSettled([...this.inFlight]);
      const all: Promise<void>[] = [];
      for (const state of this.keys.values()) {
        for (const sandbox of state.ready.splice(0)) all.push(this.destroy(state.key, sandbox, "closed"));
      }
      for (const { sandbox, key } of this.leased.values()) all.push(this.destroy(key, sandbox, "closed"));
      this.leased.clear();
      await Promise.allSettled(all);
      // Starts that were queued behind the gate settle now; anything they made is destroyed.
      await Promise.allSettled([...this.inFlight]);
    })();
    return this.closing;
  }
}

export function createSandboxPool(options: PoolOptions): Pool {
  return new Pool(options);
}
