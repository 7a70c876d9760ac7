// Why: a trainer-side listener learns a task is done from one POST of its whole TaskResult;
// listeners overwrite by task id, so delivery retries what may be transient (408, 425, 429, 5xx,
// connection errors) with backoff and gives up on other answers.
import type { TaskResult } from "../../protocol/rollout.ts";

export interface CallbackOptions {
  attempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Per attempt. */
  timeoutMs?: number;
}

export interface CallbackOutcome {
  delivered: boolean;
  attempts: number;
  last_status: number | null;
  error?: string;
}

const RETRYABLE = new Set([408, 425, 429]);

export async function deliverCallback(url: string, result: TaskResult, options: CallbackOptions = {}): Promise<CallbackOutcome> {
  const attempts = options.attempts ?? 6;
  const base = options.baseDelayMs ?? 500;
  const max = options.maxDelayMs ?? 30_000;
  let lastStatus: number | null = null;
  let error: string | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(result),
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      });
      lastStatus = response.status;
      await response.body?.cancel();
      if (response.ok) return { delivered: true, attempts: attempt, last_status: lastStatus };
      if (!RETRYABLE.has(response.status) && response.status < 500) return { delivered: false, attempts: attempt, last_status: lastStatus };
      error = `HTTP ${response.status}`;
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    if (attempt < attempts) await Bun.sleep(Math.min(max, base * 2 ** (attempt - 1)));
  }
  return { delivered: false, attempts, last_status: lastStatus, ...(error ? { error } : {}) };
}
