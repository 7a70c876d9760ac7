// Why: the one path every LLM call takes, whatever its dialect: wait out a weight-sync pause,
// call the engine, and commit the call (tokens, timings, error) before anything is answered.
import type { Dialect } from "../../protocol/calls.ts";
import type { CacheBudget } from "../cache-budget.ts";
import { PolarError, asPolarError } from "../../protocol/errors.ts";
import type { CallsRepo } from "../store/calls-repo.ts";
import type { Backend, EngineResult } from "./backends/backend.ts";
import type { PivotRequest, PivotResponse } from "./pivot.ts";
import type { PolicyGate } from "./policy-gate.ts";
import { applySamplingPolicy, type SamplingPolicy } from "./sampling-policy.ts";
import { SeqAllocator } from "./seq-allocator.ts";
import { SessionMessages } from "./session-messages.ts";

export interface CallInput {
  sessionId: string;
  dialect: Dialect;
  request: PivotRequest;
  signal: AbortSignal;
}

/** A call as committed to the store, for observers (metrics, the event feed). */
export interface CommittedCall {
  session_id: string;
  dialect: Dialect;
  engine_url: string | null;
  /** The error code; null when the engine answered. */
  error_code: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  queued_ms: number;
  engine_ms: number;
  total_ms: number;
  policy_version: number;
}

export class CallPath {
  private readonly seqs: SeqAllocator;
  private readonly messages = new SessionMessages();

  constructor(
    private readonly backend: Backend,
    private readonly gate: PolicyGate,
    private readonly calls: CallsRepo,
    private readonly sampling: SamplingPolicy = {},
    /** Told of every call once it is in the store (failures too). */
    private readonly onCommitted?: (call: CommittedCall) => void,
    /** A call the store refused to record (a full disk): the caller still gets the error. */
    private readonly onNotStored?: (err: unknown, sessionId: string) => void,
  ) {
    this.seqs = new SeqAllocator((sessionId) => calls.lastSeq(sessionId));
  }

  async run(input: CallInput): Promise<PivotResponse> {
    const started = performance.now();
    const startedAt = new Date().toISOString();
    this.messages.intern(input.sessionId, input.request);
    const request = applySamplingPolicy(input.request, this.sampling);
    const policyVersion = await this.gate.enter(input.signal).catch((err: unknown) => {
      // Hung up while waiting out a pause: never in flight, so nothing is recorded.
      throw input.signal.aborted ? new PolarError("client_closed", "the client closed the connection while the gateway was paused") : err;
    });
    // In flight from here until stored: a pause returns only once this call is in the store.
    try {
      const seq = await this.seqs.allocate(input.sessionId);
      try {
        const queuedMs = performance.now() - started;
        let result: EngineResult | undefined;
        let failure: PolarError | undefined;
        try {
          result = await this.backend.complete({ request, sessionId: input.sessionId, signal: input.signal });
        } catch (err) {
          failure = input.signal.aborted ? new PolarError("client_closed", "the client closed the connection before the engine answered") : asPolarError(err);
        }
        const engineMs = performance.now() - started - queuedMs;
        await this.calls
          .insert({
            session_id: input.sessionId,
            seq,
            dialect: input.dialect,
            request,
            response: result?.response ?? null,
            prompt_ids: result?.tokens?.promptIds ?? null,
            output_ids: result?.tokens?.outputIds ?? null,
            logprobs: result?.tokens?.logprobs ?? null,
            engine_url: result?.engineUrl ?? null,
            policy_version: policyVersion,
            timings: { queued_ms: queuedMs, engine_ms: engineMs, total_ms: performance.now() - started },
            error: failure ? { code: failure.code, message: failure.message } : null,
            notes: result?.notes ?? null,
            started_at: startedAt,
          })
          .catch((err: unknown) => {
            // The session was deleted meanwhile: what the backend just remembered for it goes too.
            if (err instanceof PolarError && err.code === "not_found") this.forget(input.sessionId);
            else this.onNotStored?.(err, input.sessionId);
            throw err;
          });
        this.onCommitted?.({
          session_id: input.sessionId,
          dialect: input.dialect,
          engine_url: result?.engineUrl ?? null,
          error_code: failure?.code ?? null,
          prompt_tokens: result ? (result.tokens?.promptIds.length ?? result.response.usage.prompt_tokens) : null,
          completion_tokens: result ? (result.tokens?.outputIds.length ?? result.response.usage.completion_tokens) : null,
          queued_ms: queuedMs,
          engine_ms: engineMs,
          total_ms: performance.now() - started,
          policy_version: policyVersion,
        });
        if (failure) throw failure;
        return result!.response;
      } finally {
        this.seqs.release(input.sessionId);
      }
    } finally {
      this.gate.leave();
    }
  }

  /** Counts the seq allocator's idle sessions and the latest messages against the gateway's shared byte budget. */
  shareCacheBudget(budget: CacheBudget): void {
    this.seqs.shareCacheBudget(budget);
    this.messages.shareCacheBudget(budget);
  }

  /** Drops what the gateway keeps in memory for a session that can make no more calls. */
  forget(sessionId: string): void {
    this.seqs.forget(sessionId);
    this.messages.forget(sessionId);
    this.calls.forget(sessionId);
    this.backend.forgetSession?.(sessionId);
  }
}
