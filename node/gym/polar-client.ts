// Why: the Gym agent drives the node only through the node's public HTTP APIs — Polar's rollout
// API (submit a task of one sample, read its result, cancel it) and the gateway's session API
// (the recorded calls and their rebuilt traces, admin token) — so it keeps working whatever the
// node does inside, and this small port is all it depends on.
import { SessionCalls, type RecordedCall } from "../../protocol/calls.ts";
import { TaskStatus } from "../../protocol/rollout.ts";
import { TrajectoryResult, type Strategy } from "../../protocol/trace.ts";
import { PolarError } from "../../protocol/errors.ts";

export type SubmitOutcome = { ok: true } | { ok: false; status: number; body: unknown };

export interface PolarRollouts {
  /** POST /rollout/task/submit. */
  submit(request: Record<string, unknown>): Promise<SubmitOutcome>;
  /** The task once it is no longer running; rejects with `signal`'s reason when it aborts first. */
  finished(taskId: string, signal: AbortSignal): Promise<TaskStatus>;
  /** DELETE /rollout/task/{id}. */
  cancel(taskId: string): Promise<void>;
  /** The session's recorded calls, in seq order. */
  calls(sessionId: string): Promise<RecordedCall[]>;
  /** The session's calls rebuilt into traces. */
  trajectory(sessionId: string, strategy: Strategy, maxContextDrift: number | null): Promise<TrajectoryResult>;
}

/** First and largest pause between two reads of a running task. */
const POLL_FIRST_MS = 100;
const POLL_MAX_MS = 1_000;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** The port over a node's HTTP API at `baseUrl`. */
export function httpPolarRollouts(baseUrl: string, adminToken: string): PolarRollouts {
  const admin = { authorization: `Bearer ${adminToken}` };
  const getJson = async (path: string, signal?: AbortSignal): Promise<unknown> => {
    const res = await fetch(`${baseUrl}${path}`, { headers: admin, ...(signal ? { signal } : {}) });
    const body: unknown = await res.json().catch(() => null);
    if (!res.ok) throw new PolarError("internal", `the node answered ${res.status} to GET ${path.replace(/\?.*$/, "")}: ${JSON.stringify(body).slice(0, 500)}`);
    return body;
  };
  return {
    async submit(request) {
      const res = await fetch(`${baseUrl}/rollout/task/submit`, {
        method: "POST",
        headers: { ...admin, "content-type": "application/json" },
        body: JSON.stringify(request),
      });
      const body: unknown = await res.json().catch(() => null);
      return res.ok ? { ok: true } : { ok: false, status: res.status, body };
    },
    async finished(taskId, signal) {
      let pause = POLL_FIRST_MS;
      for (;;) {
        const status = TaskStatus.parse(await getJson(`/rollout/task/${encodeURIComponent(taskId)}`, signal));
        if (status.status !== "running" && status.status !== "cancelling") return status;
        await sleep(pause, signal);
        pause = Math.min(POLL_MAX_MS, pause * 2);
      }
    },
    async cancel(taskId) {
      await fetch(`${baseUrl}/rollout/task/${encodeURIComponent(taskId)}`, { method: "DELETE", headers: admin });
    },
    async calls(sessionId) {
      return SessionCalls.parse(await getJson(`/v1/sessions/${encodeURIComponent(sessionId)}/calls`)).calls;
    },
    async trajectory(sessionId, strategy, maxContextDrift) {
      const drift = maxContextDrift === null ? "" : `&max_context_drift=${maxContextDrift}`;
      return TrajectoryResult.parse(await getJson(`/v1/sessions/${encodeURIComponent(sessionId)}/trajectory?strategy=${strategy}${drift}`));
    },
  };
}
