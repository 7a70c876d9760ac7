// Why: tests of retries, timeouts and failover need an engine that fails on purpose — the first
// N calls answer 500, chosen call numbers never answer — and that takes time like a real GPU.
import { EngineError } from "./engine-error.ts";
import type { MockEngineOptions } from "./options.ts";

export class CallGate {
  /** Generation calls received so far (1-based numbering of calls). */
  calls = 0;
  private readonly hang: Set<number>;

  constructor(private readonly options: Pick<MockEngineOptions, "failFirst" | "hangCalls">) {
    this.hang = new Set(options.hangCalls);
  }

  /**
   * Counts one generation call; throws the injected 500 or never resolves for a hang call
   * (until the client goes away: `signal` aborts).
   */
  async admit(signal: AbortSignal): Promise<void> {
    this.calls += 1;
    const n = this.calls;
    if (n <= this.options.failFirst) {
      throw new EngineError("internal", `injected failure: call ${n} of the first ${this.options.failFirst}`);
    }
    if (this.hang.has(n)) {
      await new Promise<never>((_, reject) => {
        signal.addEventListener("abort", () => reject(new Error(`call ${n} hung until the client left`)), { once: true });
      });
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
