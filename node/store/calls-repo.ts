// Why: every LLM call a harness makes is committed here before its response leaves the gateway.
// An agent re-sends its whole context each turn, so the prompt ids and the request's messages
// are stored as (an earlier call, how much of it is shared, the new tail), and unchanged tools as
// a reference: a long session costs its unique tokens and messages, not turns × context.
import { and, asc, count, eq, isNotNull, lte, max, sql } from "drizzle-orm";
import { heapBytes, type CacheBudget } from "../cache-budget.ts";
import { PolarError, type ErrorCode } from "../../protocol/errors.ts";
import { LruMap } from "../lru-map.ts";
import type { RecordedCall } from "../../protocol/calls.ts";
import type { Message, Tool } from "../../protocol/chat.ts";
import { callWriter, type CallInsert, type CallWriter } from "./call-writer.ts";
import type { NodeDb } from "./db.ts";
import { RecentCalls } from "./recent-calls.ts";
import { calls, sessions } from "./schema.ts";
import { decodeFloats, decodeIds, encodeFloats, encodeIds, type TokenIdList } from "./token-codec.ts";

const DEFAULT_MAX_SESSIONS = 1_000;

/** A call as the call path hands it to the store: its prompt ids may be a Uint32Array (backend.ts TokenCapture). */
export type CallRecord = Omit<RecordedCall, "prompt_ids"> & { prompt_ids: TokenIdList | null };

type CallRow = typeof calls.$inferSelect;

export class CallsRepo {
  /** Recent calls of each session (rebuilt from disk on demand). */
  private readonly recent: LruMap<string, RecentCalls>;
  private readonly writeRow: CallWriter;

  /** `maxSessions`: sessions whose recent calls stay in memory (others are re-read on their next call). */
  constructor(
    private readonly db: NodeDb,
    maxSessions = DEFAULT_MAX_SESSIONS,
  ) {
    this.writeRow = callWriter(db);
    this.recent = new LruMap(maxSessions, (recent, sessionId) => recent.bytes() + heapBytes.string(sessionId) + heapBytes.entry);
  }

  /** Counts the recent calls kept per session against the gateway's shared cache budget. */
  shareCacheBudget(budget: CacheBudget): void {
    this.recent.shareBudget(budget);
  }

  async insert(call: CallRecord): Promise<void> {
    const recent = await this.recentOf(call.session_id);
    const bases = recent.basesFor(call);
    const { prompt: promptBase, messages: messagesBase, tools: toolsBase } = bases;
    const row: CallInsert = {
      sessionId: call.session_id,
      seq: call.seq,
      dialect: call.dialect,
      request: { ...call.request, messages: call.request.messages.slice(messagesBase?.len ?? 0), tools: toolsBase !== undefined ? [] : call.request.tools },
      messagesBaseSeq: messagesBase?.seq ?? null,
      messagesBaseLen: messagesBase?.len ?? 0,
      toolsBaseSeq: toolsBase ?? null,
      response: call.response,
      promptBaseSeq: promptBase?.seq ?? null,
      promptBaseLen: promptBase?.len ?? 0,
      promptSuffix: call.prompt_ids ? encodeIds(tailOf(call.prompt_ids, promptBase?.len ?? 0)) : null,
      outputIds: call.output_ids ? encodeIds(call.output_ids) : null,
      logprobs: call.logprobs ? encodeFloats(call.logprobs) : null,
      engineUrl: call.engine_url,
      policyVersion: call.policy_version,
      queuedMs: call.timings.queued_ms,
      engineMs: call.timings.engine_ms,
      totalMs: call.timings.total_ms,
      error: call.error,
      notes: call.notes,
      startedAt: call.started_at,
    };
    try {
      // A failing row fails alone, also when committed with others (call-writer.ts).
      await this.writeRow(row);
    } catch (err) {
      this.recent.delete(call.session_id);
      if (!(await this.sessionExists(call.session_id))) {
        throw new PolarError("not_found", `session ${call.session_id} was deleted while this call was in flight; the call was not recorded`, undefined, {
          cause: err,
        });
      }
      throw err;
    }
    recent.add(call, bases);
    // Set again (not only mutated) so the budget re-measures the changed entry.
    this.recent.set(call.session_id, recent);
  }

  /** All recorded calls of a session (optionally up to `maxSeq`), in seq order, fully rebuilt. */
  async list(sessionId: string, maxSeq?: number): Promise<RecordedCall[]> {
    const where = maxSeq === undefined ? eq(calls.sessionId, sessionId) : and(eq(calls.sessionId, sessionId), lte(calls.seq, maxSeq));
    const rows = await this.db.select().from(calls).where(where).orderBy(asc(calls.seq));
    const bases: Bases = { contexts: new Map(), messages: new Map(), tools: new Map() };
    return rows.map((r) => {
      const call = rebuildRow(r, bases);
      if (call.prompt_ids) bases.contexts.set(r.seq, call.output_ids ? call.prompt_ids.concat(call.output_ids) : call.prompt_ids);
      bases.messages.set(r.seq, call.request.messages);
      bases.tools.set(r.seq, call.request.tools);
      return call;
    });
  }

  async count(sessionId: string): Promise<number> {
    const [row] = await this.db.select({ n: count() }).from(calls).where(eq(calls.sessionId, sessionId));
    return row?.n ?? 0;
  }

  /** How many of a session's calls failed, by error code: counted by SQLite, no call is read. */
  async errorCounts(sessionId: string): Promise<Partial<Record<ErrorCode, number>>> {
    const code = sql<ErrorCode>`json_extract(${calls.error}, '$.code')`;
    const rows = await this.db
      .select({ code, n: count() })
      .from(calls)
      .where(and(eq(calls.sessionId, sessionId), isNotNull(calls.error)))
      .groupBy(code);
    return Object.fromEntries(rows.map((r) => [r.code, r.n]));
  }

  /** Highest recorded seq of a session, or -1. */
  async lastSeq(sessionId: string): Promise<number> {
    const [row] = await this.db
      .select({ seq: max(calls.seq) })
      .from(calls)
      .where(eq(calls.sessionId, sessionId));
    return row?.seq ?? -1;
  }

  /** Bytes stored for a session: prompt suffixes, outputs, logprobs, and request JSON. */
  async storedBytes(sessionId: string): Promise<{ prompt: number; output: number; logprobs: number; requests: number }> {
    const rows = await this.db
      .select({ p: calls.promptSuffix, o: calls.outputIds, l: calls.logprobs, r: calls.request })
      .from(calls)
      .where(eq(calls.sessionId, sessionId));
    const total = { prompt: 0, output: 0, logprobs: 0, requests: 0 };
    for (const r of rows) {
      total.prompt += r.p?.byteLength ?? 0;
      total.output += r.o?.byteLength ?? 0;
      total.logprobs += r.l?.byteLength ?? 0;
      total.requests += JSON.stringify(r.r).length;
    }
    return total;
  }

  forget(sessionId: string): void {
    this.recent.delete(sessionId);
  }

  private async sessionExists(sessionId: string): Promise<boolean> {
    const found = await this.db.select({ id: sessions.id }).from(sessions).where(eq(sessions.id, sessionId)).limit(1);
    return found.length > 0;
  }

  private async recentOf(sessionId: string): Promise<RecentCalls> {
    let recent = this.recent.get(sessionId);
    if (!recent) {
      recent = RecentCalls.of(await this.list(sessionId));
      this.recent.set(sessionId, recent);
    }
    return recent;
  }
}

/** `ids` from `start` on; a Uint32Array's as a view (its ids never change once captured). */
function tailOf(ids: TokenIdList, start: number): TokenIdList {
  return ids instanceof Uint32Array ? ids.subarray(start) : ids.slice(start);
}

function fromBase<T>(what: string, row: CallRow, baseSeq: number | null, baseLen: number, bases: Map<number, T[]>): T[] {
  if (baseSeq === null) return [];
  const base = bases.get(baseSeq);
  if (!base) throw new Error(`call ${row.sessionId}#${row.seq}: ${what} base #${baseSeq} is missing`);
  return base.slice(0, baseLen);
}

/** Already rebuilt calls of the session, by seq: what later rows are stored against. */
interface Bases {
  contexts: Map<number, number[]>;
  messages: Map<number, Message[]>;
  tools: Map<number, Tool[]>;
}

function rebuildRow(r: CallRow, bases: Bases): RecordedCall {
  const stored = r.request as RecordedCall["request"];
  const request = {
    ...stored,
    messages: fromBase("messages", r, r.messagesBaseSeq, r.messagesBaseLen, bases.messages).concat(stored.messages),
    tools: r.toolsBaseSeq === null ? stored.tools : fromBase("tools", r, r.toolsBaseSeq, Number.POSITIVE_INFINITY, bases.tools),
  };
  const promptIds = r.promptSuffix ? fromBase("prompt", r, r.promptBaseSeq, r.promptBaseLen, bases.contexts).concat(decodeIds(r.promptSuffix)) : null;
  return {
    session_id: r.sessionId,
    seq: r.seq,
    dialect: r.dialect as RecordedCall["dialect"],
    request,
    response: r.response as RecordedCall["response"],
    prompt_ids: promptIds,
    output_ids: r.outputIds ? decodeIds(r.outputIds) : null,
    logprobs: r.logprobs ? decodeFloats(r.logprobs) : null,
    engine_url: r.engineUrl,
    policy_version: r.policyVersion,
    timings: { queued_ms: r.queuedMs, engine_ms: r.engineMs, total_ms: r.totalMs },
    error: r.error as RecordedCall["error"],
    notes: r.notes as RecordedCall["notes"],
    started_at: r.startedAt,
  };
}
