// Why: a full disk (SQLITE_FULL) or another failing store write must cost the rollout that wrote,
// never the node. Every write failure the pipeline and task book meet is reported here: the node
// then answers /health as unhealthy and takes no new tasks until writes can succeed again (a write
// succeeds, or the store's file system has room again). What is logged or put in a result is the
// SQLite code and message only — drizzle's own message carries the query's parameters (a result's
// token arrays), which never leave the process.
import { statfsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { describeStoreError } from "../../lib/store-errors.ts";

/** Free bytes the store's file system must have again before writes are tried anew. */
const ROOM_TO_RECOVER = 1024 * 1024;
/** How often a failing store looks for room again. */
const RECOVERY_PROBE_MS = 1_000;

export interface StoreFailure {
  /** SQLite's code (SQLITE_FULL, SQLITE_IOERR, …) or the error's name. */
  code: string;
  /** e.g. "SQLITE_FULL: database or disk is full (saving a result)". */
  description: string;
  at: string;
}

export class StoreHealth {
  private failure: StoreFailure | null = null;
  /** The last failure and when (performance.now()), kept after recovery: a rollout that ran across it is not trusted. */
  private last: { failure: StoreFailure; t: number } | null = null;
  private probe: ReturnType<typeof setInterval> | null = null;
  private readonly recoveredListeners: (() => void)[] = [];

  /** `db`: the store's file (":memory:" has no file system to watch). */
  constructor(
    private readonly db: string,
    private readonly log: (line: Record<string, unknown>) => void = (line) => console.error(JSON.stringify(line)),
  ) {}

  /** Null while writes succeed; the last failure otherwise. */
  get failing(): StoreFailure | null {
    return this.failure;
  }

  /** A write failed: the node is unhealthy until writes can succeed; returns what may be said of it. */
  failed(err: unknown, what: string, ids: Record<string, string> = {}): StoreFailure {
    const { code, message } = describeStoreError(err);
    const failure = { code, description: `${code}: ${message} (${what})`, at: new Date().toISOString() };
    if (!this.failure) this.log({ level: "error", event: "store.write_failed", code, message, what, ...ids });
    this.failure = failure;
    this.last = { failure, t: performance.now() };
    if (!this.probe && this.db !== ":memory:") {
      this.probe = setInterval(() => this.hasRoom() && this.recovered("room on the store's file system again"), RECOVERY_PROBE_MS);
      this.probe.unref?.();
    }
    return failure;
  }

  /** The last failure if it happened at or after `t` (performance.now()), else null. */
  failedSince(t: number): StoreFailure | null {
    return this.last && this.last.t >= t ? this.last.failure : null;
  }

  /** Runs whenever writes can succeed again (to store what could not be stored meanwhile). */
  onRecovered(listener: () => void): void {
    this.recoveredListeners.push(listener);
  }

  /** A write succeeded: the store works. */
  succeeded(): void {
    if (this.failure) this.recovered("a write succeeded");
  }

  stop(): void {
    if (this.probe) clearInterval(this.probe);
    this.probe = null;
  }

  private recovered(why: string): void {
    this.log({ level: "info", event: "store.writable_again", after: this.failure?.code, why });
    this.failure = null;
    this.stop();
    for (const listener of this.recoveredListeners) listener();
  }

  private hasRoom(): boolean {
    try {
      const fs = statfsSync(dirname(resolve(this.db)));
      return fs.bavail * fs.bsize >= ROOM_TO_RECOVER;
    } catch {
      return false;
    }
  }
}
