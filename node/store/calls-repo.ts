// Why: every LLM call a harness makes is committed here before its response leaves the gateway.
// An agent re-sends its whole context each turn, so the prompt ids and the request's messages
// are stored as (an earlier call, how much of it is shared, the new tail), and unchanged tools as
// a reference: a long session costs its unique tokens and messages, not turns × context.
import { and, asc, count, eq, isNotNull, lte, max, sql } from "drizzle-orm";
import { heapBytes, type CacheBudget } from "../cache-budget.ts";
import { PolarError, type ErrorCode } from "../errors.ts";
import { LruMap } from "../lru-map.ts";
import type { RecordedCall } from "../../protocol/calls.ts";
import type { Message, Tool } from "../../protocol/chat.ts";
import { callWriter, type CallInsert, type CallWriter } from "./call-writer.ts";
import type { NodeDb } from "./db.ts";
import { calls, sessions } from "./schema.ts";
import { sameJson } from "./same-json.ts";
import { commonPrefixLength, concatPrefixLength, decodeFloats, decodeIds, encodeFloats, encodeIds } from "./token-codec.ts";

/** How many recent calls per session are kept in memory as base candidates. */
const RECENT_PER_SESSION = 4;
const DEFAULT_MAX_SESSIONS = 1_000;

/** What a later call of the session may be stored against (the recorded arrays, not copies). */
interface Expanded {
  seq: number;
  /** The call's prompt; followed by its sampled output, it is what the next prompt usually extends. */
  promptIds: readonly number[] | null;
  outputIds: readonly number[];
  messages: readonly Message[];
  tools: readonly Tool[];
  /** Estimated heap bytes of the above (for the shared cache budget). */
  bytes: number;
}

interface Base {
  seq: number;
  len: number;
}

type CallRow = typeof calls.$inferSelect;

export class CallsRepo {
  /** Recent calls of each session, newest last (rebuilt from disk on demand). */
  private readonly recent: LruMap<string, Expanded[]>;
  private readonly writeRow: CallWriter;

  /** `maxSessions`: sessions whose recent calls stay in memory (others are re-read on their next call). */
  constructor(
    private readonly db: NodeDb,
    maxSessions = DEFAULT_MAX_SESSIONS,
  ) {
    this.writeRow = callWriter(db);
    this.recent = new LruMap(maxSessions, (list, sessionId) => list.reduce((sum, e) => sum + e.bytes, heapBytes.string(sessionId) + heapBytes.entry));
  }

  /** Counts the recent calls kept per session against the gateway's shared cache budget. */
  shareCacheBudget(budget: CacheBudget): void {
    this.recent.shareBudget(budget);
  }

  async insert(call: RecordedCall): Promise<void> {
    const expanded = expand(call);
    const recent = await this.recentOf(call.session_id);
    // Calls finish out of order (sub-agents, parallel calls); `list` rebuilds in seq order, so a
    // call may only be stored against an earlier seq.
    const candidates = recent.filter((c) => c.seq < call.seq);
    const prompt = call.prompt_ids;
    const promptBase = prompt
      ? longestBase(
          candidates,
          (c) => (c.promptIds ? Math.min(prompt.length, c.promptIds.length + c.outputIds.length) : 0),
          (c) => concatPrefixLength(c.promptIds!, c.outputIds, prompt),
        )
      : undefined;
    const messages = call.request.messages;
    const messagesBase = longestBase(
      candidates,
      (c) => Math.min(messages.length, c.messages.length),
      (c) => commonPrefixLength(c.messages, messages, sameJson),
    );
    const toolsBase = call.request.tools.length > 0 ? candidates.findLast((c) => sameJson(c.tools, call.request.tools)) : undefined;
    const row: CallInsert = {
      sessionId: call.session_id,
      seq: call.seq,
      dialect: call.dialect,
      request: { ...call.request, messages: call.request.messages.slice(messagesBase?.len ?? 0), tools: toolsBase ? [] : call.request.tools },
      messagesBaseSeq: messagesBase?.seq ?? null,
      messagesBaseLen: messagesBase?.len ?? 0,
      toolsBaseSeq: toolsBase?.seq ?? null,
      response: call.response,
      promptBaseSeq: promptBase?.seq ?? null,
      promptBaseLen: promptBase?.len ?? 0,
      promptSuffix: call.prompt_ids ? encodeIds(call.prompt_ids.slice(promptBase?.len ?? 0)) : null,
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
        throw new PolarError("not_found", `session ${call.session_id} was deleted while this call was in flight; the call was not recorded`, undefined, { cause: err });
      }
      throw err;
    }
    recent.push(expanded);
    if (recent.length > RECENT_PER_SESSION) recent.shift();
    // Set again (not only mutated) so the budget re-measures the grown entry.
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
    const [row] = await this.db.select({ seq: max(calls.seq) }).from(calls).where(eq(calls.sessionId, sessionId));
    return row?.seq ?? -1;
  }

  /** Bytes stored for a session: prompt suffixes, outputs, logprobs, and request JSON. */
  async storedBytes(sessionId: string): Promise<{ prompt: number; output: number; logprobs: number; requests: number }> {
    const rows = await this.db.select({ p: calls.promptSuffix, o: calls.outputIds, l: calls.logprobs, r: calls.request }).from(calls).where(eq(calls.sessionId, sessionId));
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

  private async recentOf(sessionId: string): Promise<Expanded[]> {
    let list = this.recent.get(sessionId);
    if (!list) {
      list = (await this.list(sessionId)).slice(-RECENT_PER_SESSION).map(expand);
      this.recent.set(sessionId, list);
    }
    return list;
  }
}

function expand(call: RecordedCall): Expanded {
  const outputIds = call.output_ids ?? [];
  const bytes =
    heapBytes.entry + heapBytes.numbers(call.prompt_ids) + heapBytes.numbers(outputIds) + heapBytes.json(call.request.messages) + heapBytes.json(call.request.tools);
  return { seq: call.seq, promptIds: call.prompt_ids, outputIds, messages: call.request.messages, tools: call.request.tools, bytes };
}

/**
 * The candidate sharing the longest prefix (newest first on a tie). `bound` is an upper limit of
 * `shared`: a candidate that cannot beat the best so far is not compared, so a prompt that
 * extends the newest call costs one comparison, not one per recent call.
 */
function longestBase(candidates: readonly Expanded[], bound: (c: Expanded) => number, shared: (c: Expanded) => number): Base | undefined {
  let best: Base | undefined;
  for (let i = candidates.length - 1; i >= 0; i--) {
    const c = candidates[i]!;
    if (bound(c) <= (best?.len ?? 0)) continue;
    const len = shared(c);
    if (len > (best?.len ?? 0)) best = { seq: c.seq, len };
  }
  return best;
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
