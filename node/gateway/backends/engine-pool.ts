// Why: several engines serve one backend; calls of one session must stay on one engine (its
// prefix cache holds the conversation) while new sessions spread by load and a dead engine is
// routed around. Routing state is in-memory and per process: it is an optimisation, not a record.
import { heapBytes, type CacheBudget } from "../../cache-budget.ts";
import { LruMap } from "../../lru-map.ts";

export interface EngineLease {
  readonly url: string;
  /** Ends the call's claim on the engine (idempotent). */
  release(): void;
}

interface EngineState {
  url: string;
  inFlight: number;
  /** Epoch ms until which routing skips this engine; 0 = healthy. */
  downUntil: number;
}

export interface EnginePoolOptions {
  downMs: number;
  maxSessions: number;
  now?: () => number;
}

export class EnginePool {
  private engines: EngineState[];
  /** sessionId → engine url; the least recently used session is forgotten first. */
  private readonly sticky: LruMap<string, string>;
  private readonly now: () => number;

  constructor(
    urls: readonly string[],
    private readonly options: EnginePoolOptions,
  ) {
    if (urls.length === 0) throw new Error("EnginePool needs at least one engine URL");
    this.engines = urls.map((url) => ({ url: engineBaseUrl(url), inFlight: 0, downUntil: 0 }));
    this.now = options.now ?? Date.now;
    this.sticky = new LruMap(options.maxSessions, (url, sessionId) => heapBytes.string(sessionId) + heapBytes.string(url) + heapBytes.entry);
  }

  /** Counts the sticky-routing entries against the gateway's shared cache budget. */
  shareCacheBudget(budget: CacheBudget): void {
    this.sticky.shareBudget(budget);
  }

  get urls(): string[] {
    return this.engines.map((e) => e.url);
  }

  /**
   * Replaces the engine set (router worker discovery), keeping the load and health of engines
   * that stay; sessions stuck to a removed engine move on their next call.
   */
  setUrls(urls: readonly string[]): void {
    if (urls.length === 0) return;
    const old = new Map(this.engines.map((e) => [e.url, e]));
    this.engines = urls.map(engineBaseUrl).map((url) => old.get(url) ?? { url, inFlight: 0, downUntil: 0 });
  }

  /**
   * Picks the engine for a call of `sessionId` and counts the call against it until released.
   * A call of no session (`null`: model listing, …) goes to a healthy engine and is not remembered.
   */
  acquire(sessionId: string | null): EngineLease {
    const engine = this.pick(sessionId);
    engine.inFlight += 1;
    if (sessionId !== null) this.sticky.set(sessionId, engine.url);
    let released = false;
    return {
      url: engine.url,
      release: () => {
        if (released) return;
        released = true;
        engine.inFlight -= 1;
      },
    };
  }

  /** The engine refused a connection: skip it for a while; its sessions move on their next call. */
  markDown(url: string): void {
    const engine = this.engines.find((e) => e.url === url);
    if (engine) engine.downUntil = this.now() + this.options.downMs;
  }

  /** Drops the session's routing memory (session closed). */
  forget(sessionId: string): void {
    this.sticky.delete(sessionId);
  }

  /** The engine the session is stuck to, if any. */
  engineOf(sessionId: string): string | undefined {
    return this.sticky.get(sessionId);
  }

  /** Current in-flight count per engine (for metrics and tests). */
  load(): Record<string, number> {
    return Object.fromEntries(this.engines.map((e) => [e.url, e.inFlight]));
  }

  private pick(sessionId: string | null): EngineState {
    const now = this.now();
    const stuck = sessionId === null ? undefined : this.sticky.get(sessionId);
    const healthy = this.engines.filter((e) => e.downUntil <= now);
    const stuckEngine = healthy.find((e) => e.url === stuck);
    if (stuckEngine) return stuckEngine;
    if (healthy.length > 0) return this.leastLoaded(healthy);
    // Every engine is marked down: try the one that comes back first rather than failing unseen.
    return this.engines.reduce((a, b) => (b.downUntil < a.downUntil ? b : a));
  }

  /** Fewest in-flight calls; ties go to the engine holding fewer sessions, then config order. */
  private leastLoaded(engines: EngineState[]): EngineState {
    const sessions = new Map<string, number>();
    for (const [, url] of this.sticky) sessions.set(url, (sessions.get(url) ?? 0) + 1);
    const score = (e: EngineState) => [e.inFlight, sessions.get(e.url) ?? 0] as const;
    return engines.reduce((a, b) => {
      const [ai, as] = score(a);
      const [bi, bs] = score(b);
      return bi < ai || (bi === ai && bs < as) ? b : a;
    });
  }
}

/** Engine URLs are base URLs: trailing slashes and a trailing `/v1` (as OpenAI SDK base URLs carry) are dropped. */
export function engineBaseUrl(url: string): string {
  return url.replace(/\/+$/, "").replace(/\/v1$/, "");
}
