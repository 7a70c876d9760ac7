// Why: weight sync needs the gateway to stop admitting calls, drain the ones in flight, and
// stamp every later call with the new policy version; new calls wait rather than fail. Versions
// only move forward: a late or replayed resume naming an older version is refused.
import { PolarError } from "../../protocol/errors.ts";

export class PolicyGate {
  private paused = false;
  private inFlight = 0;
  private waiters: Array<() => void> = [];
  private drainedWaiters: Array<() => void> = [];

  constructor(private version = 0) {}

  get policyVersion(): number {
    return this.version;
  }

  get isPaused(): boolean {
    return this.paused;
  }

  get inFlightCalls(): number {
    return this.inFlight;
  }

  /** Waits while paused, then counts the call as in flight; returns the version to stamp. */
  async enter(signal?: AbortSignal): Promise<number> {
    while (this.paused) {
      signal?.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          this.waiters = this.waiters.filter((w) => w !== wake);
          reject(signal!.reason);
        };
        const wake = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        this.waiters.push(wake);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    }
    this.inFlight++;
    return this.version;
  }

  /** Calls waiting for a resume. */
  get waitingCalls(): number {
    return this.waiters.length;
  }

  leave(): void {
    this.inFlight--;
    if (this.inFlight === 0) for (const done of this.drainedWaiters.splice(0)) done();
  }

  /** Stops admitting calls; resolves once every in-flight call has finished. */
  async pause(): Promise<void> {
    this.paused = true;
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.drainedWaiters.push(resolve));
  }

  /** Releases waiting calls; refuses (conflict, gate unchanged) a version older than the current one. */
  resume(policyVersion?: number): void {
    if (policyVersion !== undefined && policyVersion < this.version) {
      throw new PolarError("conflict", `policy_version ${policyVersion} is older than the current ${this.version}; versions only move forward`);
    }
    if (policyVersion !== undefined) this.version = policyVersion;
    this.paused = false;
    for (const wake of this.waiters.splice(0)) wake();
  }
}
