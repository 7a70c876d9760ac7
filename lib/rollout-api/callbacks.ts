// Why: a task naming a `callback_url` gets its whole TaskResult POSTed there once it ends; the
// node and the coordinator deliver it through this one sender. Listeners overwrite by task id, so
// what may be transient (408, 425, 429, 500, 502, 503, 504, no connection) is retried with
// backoff; any other answer ends delivery. The answer's body is read to its end, never dropped
// with the connection (a Python listener logs ConnectionResetError when it is).
import type { TaskResult } from "../../protocol/rollout.ts";

export const CALLBACK_RETRY_STATUSES: ReadonlySet<number> = new Set([408, 425, 429, 500, 502, 503, 504]);

export interface CallbackOptions {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Per attempt, answer body included (Polar's callback timeout). */
  timeoutMs: number;
}

export const CALLBACK_DEFAULTS: CallbackOptions = { attempts: 6, baseDelayMs: 500, maxDelayMs: 30_000, timeoutMs: 10_000 };

export interface CallbackOutcome {
  delivered: boolean;
  attempts: number;
  last_status: number | null;
  error?: string;
}

export class CallbackSender {
  private stopped = false;
  private readonly inFlight = new Set<Promise<CallbackOutcome>>();
  private readonly options: CallbackOptions;

  constructor(options: Partial<CallbackOptions> = {}) {
    this.options = { ...CALLBACK_DEFAULTS, ...options };
  }

  /** Delivers in the background; resolves with how it went (never rejects). */
  send(url: string, result: TaskResult): Promise<CallbackOutcome> {
    const delivery = this.deliver(url, JSON.stringify(result)).finally(() => this.inFlight.delete(delivery));
    this.inFlight.add(delivery);
    return delivery;
  }

  private async deliver(url: string, body: string): Promise<CallbackOutcome> {
    const { attempts, baseDelayMs, maxDelayMs, timeoutMs } = this.options;
    let lastStatus: number | null = null;
    let error: string | undefined;
    let attempt = 0;
    while (attempt < attempts && !this.stopped) {
      attempt++;
      try {
        const signal = AbortSignal.timeout(timeoutMs);
        const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body, signal });
        lastStatus = response.status;
        await response.arrayBuffer();
        if (response.ok) return { delivered: true, attempts: attempt, last_status: lastStatus };
        error = `HTTP ${response.status}`;
        if (!CALLBACK_RETRY_STATUSES.has(response.status)) break;
      } catch (err) {
        error = err instanceof Error ? err.message : String(err);
      }
      console.error(JSON.stringify({ level: "warn", event: "callback_failed", status: lastStatus, attempt, error }));
      if (attempt < attempts && !this.stopped) await Bun.sleep(Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1)));
    }
    return { delivered: false, attempts: attempt, last_status: lastStatus, ...(error ? { error } : {}) };
  }

  /** Waits for every delivery in flight (tests, shutdown). */
  async drain(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  /** No new attempts start; deliveries in flight end after their current attempt. */
  stop(): void {
    this.stopped = true;
  }
}
