// Why: a rollout API task may name a `callback_url`; once the task completes its whole
// TaskResult is POSTed there, retried with backoff on the statuses that mean "try again"
// (listeners overwrite by task id, so a repeat is harmless).
const RETRY_STATUSES = new Set([408, 425, 429, 500, 502, 503, 504]);

export interface CallbackOptions {
  attempts: number;
  firstDelayMs: number;
  timeoutMs: number;
}

const DEFAULTS: CallbackOptions = { attempts: 6, firstDelayMs: 500, timeoutMs: 30_000 };

export class CallbackSender {
  private stopped = false;
  private readonly inFlight = new Set<Promise<boolean>>();

  constructor(private readonly options: CallbackOptions = DEFAULTS) {}

  /** Delivers in the background; resolves true once a 2xx answered. */
  send(url: string, body: unknown): Promise<boolean> {
    const delivery = this.deliver(url, JSON.stringify(body)).finally(() => this.inFlight.delete(delivery));
    this.inFlight.add(delivery);
    return delivery;
  }

  private async deliver(url: string, body: string): Promise<boolean> {
    let delay = this.options.firstDelayMs;
    for (let attempt = 1; attempt <= this.options.attempts && !this.stopped; attempt++) {
      let status = 0;
      try {
        const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body, signal: AbortSignal.timeout(this.options.timeoutMs) });
        status = res.status;
        await res.body?.cancel();
        if (res.ok) return true;
        if (!RETRY_STATUSES.has(status)) break;
      } catch {
        // unreachable listener: retried like a 503
      }
      console.error(JSON.stringify({ level: "warn", event: "callback_failed", status, attempt }));
      await Bun.sleep(delay);
      delay *= 2;
    }
    return false;
  }

  /** Waits for deliveries in flight (tests, shutdown). */
  async drain(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  stop(): void {
    this.stopped = true;
  }
}
