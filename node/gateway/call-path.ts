// Why: the one path every LLM call takes, whatever its dialect: wait out a weight-sync pause,
// call the engine, and commit the call (tokens, timings, error) before anything is answered.
import type { Dialect } from "../../protocol/calls.ts";
import { asPolarError } from "../errors.ts";
import type { CallsRepo } from "../store/calls-repo.ts";
import type { Backend, EngineResult } from "./backends/backend.ts";
import type { PivotRequest, PivotResponse } from "./pivot.ts";
import type { PolicyGate } from "./policy-gate.ts";
import { applySamplingPolicy, type SamplingPolicy } from "./sampling-policy.ts";

export interface CallInput {
  sessionId: string;
  dialect: Dialect;
  request: PivotRequest;
  signal: AbortSignal;
}

export class CallPath {
  /** Next seq per session; seeded from the store so a restart never reuses a number. */
  private readonly nextSeqs = new Map<string, Promise<number>>();

  constructor(
    private readonly backend: Backend,
    private readonly gate: PolicyGate,
    private readonly calls: CallsRepo,
    private readonly sampling: SamplingPolicy = {},
  ) {}

  async run(input: CallInput): Promise<PivotResponse> {
    const started = performance.now();
    const startedAt = new Date().toISOString();
    const seq = await this.allocateSeq(input.sessionId);
    const request = applySamplingPolicy(input.request, this.sampling);
    const policyVersion = await this.gate.enter(input.signal);
    const queuedMs = performance.now() - started;
    let result: EngineResult | undefined;
    let failure: ReturnType<typeof asPolarError> | undefined;
    try {
      result = await this.backend.complete({ request, sessionId: input.sessionId, signal: input.signal });
    } catch (err) {
      failure = asPolarError(err);
    } finally {
      this.gate.leave();
    }
    const engineMs = performance.now() - started - queuedMs;
    await this.calls.insert({
      sessionId: input.sessionId,
      seq,
      dialect: input.dialect,
      request,
      response: result?.response ?? null,
      promptIds: result?.tokens?.promptIds ?? null,
      outputIds: result?.tokens?.outputIds ?? null,
      logprobs: result?.tokens?.logprobs ?? null,
      engineUrl: result?.engineUrl ?? null,
      policyVersion,
      timings: { queuedMs, engineMs, totalMs: performance.now() - started },
      error: failure ? { code: failure.code, message: failure.message } : null,
      notes: result?.notes ?? null,
      startedAt,
    });
    if (failure) throw failure;
    return result!.response;
  }

  /** Drops what the gateway keeps in memory for a session that can make no more calls. */
  forget(sessionId: string): void {
    this.nextSeqs.delete(sessionId);
    this.calls.forget(sessionId);
    this.backend.forgetSession?.(sessionId);
  }

  private allocateSeq(sessionId: string): Promise<number> {
    const previous = this.nextSeqs.get(sessionId) ?? this.calls.lastSeq(sessionId);
    const next = previous.then((seq) => seq + 1);
    this.nextSeqs.set(sessionId, next);
    // A failed store read must not poison the session's chain: the next call reads again.
    next.catch(() => {
      if (this.nextSeqs.get(sessionId) === next) this.nextSeqs.delete(sessionId);
    });
    return next;
  }
}
