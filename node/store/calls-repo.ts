// Why: every LLM call a harness makes is committed here before its response leaves the gateway;
// prompts are stored as (earlier call's tokens, shared length, new suffix) so a long session
// costs its unique tokens, not turns × context.
import { and, asc, count, eq, lte, max } from "drizzle-orm";
import type { RecordedCall } from "../../protocol/calls.ts";
import type { NodeDb } from "./db.ts";
import { calls } from "./schema.ts";
import { commonPrefixLength, decodeFloats, decodeIds, encodeFloats, encodeIds } from "./token-codec.ts";

/** How many recent calls per session are kept in memory as prefix candidates. */
const RECENT_PER_SESSION = 4;

interface FullTokens {
  seq: number;
  /** The call's prompt followed by its sampled output: what the next prompt usually extends. */
  context: number[];
}

export class CallsRepo {
  /** Recent calls' full token sequences, per session, newest last (rebuilt from disk on demand). */
  private readonly recent = new Map<string, FullTokens[]>();

  constructor(private readonly db: NodeDb) {}

  async insert(call: RecordedCall): Promise<void> {
    const base = call.promptIds ? await this.bestBase(call.sessionId, call.promptIds) : undefined;
    const baseLen = base?.len ?? 0;
    await this.db.insert(calls).values({
      sessionId: call.sessionId,
      seq: call.seq,
      dialect: call.dialect,
      request: call.request,
      response: call.response,
      promptBaseSeq: base?.seq ?? null,
      promptBaseLen: baseLen,
      promptSuffix: call.promptIds ? encodeIds(call.promptIds.slice(baseLen)) : null,
      outputIds: call.outputIds ? encodeIds(call.outputIds) : null,
      logprobs: call.logprobs ? encodeFloats(call.logprobs) : null,
      engineUrl: call.engineUrl,
      policyVersion: call.policyVersion,
      queuedMs: call.timings.queuedMs,
      engineMs: call.timings.engineMs,
      totalMs: call.timings.totalMs,
      error: call.error,
      notes: call.notes,
      startedAt: call.startedAt,
    });
    if (call.promptIds) this.remember(call.sessionId, { seq: call.seq, context: [...call.promptIds, ...(call.outputIds ?? [])] });
  }

  /** All recorded calls of a session (optionally up to `maxSeq`), in seq order, tokens rebuilt. */
  async list(sessionId: string, maxSeq?: number): Promise<RecordedCall[]> {
    const where = maxSeq === undefined ? eq(calls.sessionId, sessionId) : and(eq(calls.sessionId, sessionId), lte(calls.seq, maxSeq));
    const rows = await this.db.select().from(calls).where(where).orderBy(asc(calls.seq));
    const contexts = new Map<number, number[]>();
    return rows.map((r) => {
      let promptIds: number[] | null = null;
      if (r.promptSuffix) {
        const base = r.promptBaseSeq === null ? [] : contexts.get(r.promptBaseSeq);
        if (!base) throw new Error(`call ${sessionId}#${r.seq}: prompt base #${r.promptBaseSeq} is missing`);
        promptIds = base.slice(0, r.promptBaseLen).concat(decodeIds(r.promptSuffix));
      }
      const outputIds = r.outputIds ? decodeIds(r.outputIds) : null;
      if (promptIds) contexts.set(r.seq, outputIds ? promptIds.concat(outputIds) : promptIds);
      return {
        sessionId: r.sessionId,
        seq: r.seq,
        dialect: r.dialect as RecordedCall["dialect"],
        request: r.request as RecordedCall["request"],
        response: r.response as RecordedCall["response"],
        promptIds,
        outputIds,
        logprobs: r.logprobs ? decodeFloats(r.logprobs) : null,
        engineUrl: r.engineUrl,
        policyVersion: r.policyVersion,
        timings: { queuedMs: r.queuedMs, engineMs: r.engineMs, totalMs: r.totalMs },
        error: r.error as RecordedCall["error"],
        notes: r.notes as RecordedCall["notes"],
        startedAt: r.startedAt,
      };
    });
  }

  async count(sessionId: string): Promise<number> {
    const [row] = await this.db.select({ n: count() }).from(calls).where(eq(calls.sessionId, sessionId));
    return row?.n ?? 0;
  }

  /** Highest recorded seq of a session, or -1. */
  async lastSeq(sessionId: string): Promise<number> {
    const [row] = await this.db.select({ seq: max(calls.seq) }).from(calls).where(eq(calls.sessionId, sessionId));
    return row?.seq ?? -1;
  }

  /** Bytes of token data stored for a session (prompt suffixes + outputs + logprobs). */
  async storedTokenBytes(sessionId: string): Promise<{ prompt: number; output: number; logprobs: number }> {
    const rows = await this.db.select({ p: calls.promptSuffix, o: calls.outputIds, l: calls.logprobs }).from(calls).where(eq(calls.sessionId, sessionId));
    const total = { prompt: 0, output: 0, logprobs: 0 };
    for (const r of rows) {
      total.prompt += r.p?.byteLength ?? 0;
      total.output += r.o?.byteLength ?? 0;
      total.logprobs += r.l?.byteLength ?? 0;
    }
    return total;
  }

  forget(sessionId: string): void {
    this.recent.delete(sessionId);
  }

  private async bestBase(sessionId: string, promptIds: number[]): Promise<{ seq: number; len: number } | undefined> {
    let candidates = this.recent.get(sessionId);
    if (!candidates) {
      const stored = await this.list(sessionId);
      candidates = stored.filter((c) => c.promptIds).slice(-RECENT_PER_SESSION).map((c) => ({ seq: c.seq, context: [...c.promptIds!, ...(c.outputIds ?? [])] }));
      this.recent.set(sessionId, candidates);
    }
    let best: { seq: number; len: number } | undefined;
    for (const c of candidates) {
      const len = commonPrefixLength(c.context, promptIds);
      if (len > 0 && (!best || len > best.len)) best = { seq: c.seq, len };
    }
    return best;
  }

  private remember(sessionId: string, tokens: FullTokens): void {
    const list = this.recent.get(sessionId) ?? [];
    list.push(tokens);
    if (list.length > RECENT_PER_SESSION) list.shift();
    this.recent.set(sessionId, list);
  }
}
