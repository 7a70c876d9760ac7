// Why: every coordinator write records a decision already made in memory — a result accepted, a
// rollout assigned or requeued, a group ended — so a write the store refuses (a full disk:
// SQLITE_FULL) cannot simply fail: the node would never be acknowledged, the group never end,
// a resent result be taken for a repeat. A failed write is retried, in its place in the ordered
// write chain, until it succeeds (its transaction was rolled back, so running it again is the
// same write); everything after it waits, nothing is acknowledged before it is durable, and the
// coordinator takes no new group meanwhile (its health says why). Other errors fail as before.
import { describeStoreError, isStoreError } from "../lib/store-errors.ts";

/** How long a failed write waits before it is tried again. */
export const STORE_RETRY_MS = 1_000;

export interface StoreFailure {
  /** e.g. "SQLITE_FULL: database or disk is full". */
  description: string;
  /** When the first write of this run of failures failed (ISO). */
  since: string;
}

export interface StoreGuardEvents {
  failed(failure: StoreFailure, code: string): void;
  recovered(failure: StoreFailure, retries: number): void;
}

export class StoreGuard {
  private failure: StoreFailure | null = null;
  private retries = 0;
  private stopped = false;

  constructor(
    private readonly events: StoreGuardEvents,
    private readonly retryMs = STORE_RETRY_MS,
  ) {}

  /** Null while writes succeed; the failure that writes are being retried for otherwise. */
  get failing(): StoreFailure | null {
    return this.failure;
  }

  /** Runs `write`, again every `retryMs` for as long as the store refuses it. */
  async run<T>(write: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        const value = await write();
        if (this.failure) this.recovered();
        return value;
      } catch (err) {
        if (!isStoreError(err) || this.stopped) throw err;
        this.failed(err);
        await Bun.sleep(this.retryMs);
        if (this.stopped) throw err;
      }
    }
  }

  /** The coordinator is stopping: a write the store refuses fails instead of waiting (its decision is lost with the process, as any unwritten one). */
  stop(): void {
    this.stopped = true;
  }

  private failed(err: unknown): void {
    this.retries++;
    if (this.failure) return;
    const { code, message } = describeStoreError(err);
    this.failure = { description: `${code}: ${message}`, since: new Date().toISOString() };
    this.events.failed(this.failure, code);
  }

  private recovered(): void {
    const failure = this.failure!;
    const retries = this.retries;
    this.failure = null;
    this.retries = 0;
    this.events.recovered(failure, retries);
  }
}
