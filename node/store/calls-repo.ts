// Why: every LLM call a harness makes is committed here before its response leaves the gateway.
// An agent re-sends its whole context each turn, so the prompt ids and the request's messages
// are stored as (an earlier call, how much of it is shared, the new tail), and unchanged tools as
// a reference: a long session costs its unique tokens and messages, not turns × context.
import { and, asc, count, eq, getTableColumns, lte, max, sql } from "drizzle-orm";
import { PolarError } from "../errors.ts";
import { heapBytes, type CacheBudget } from "../cache-budget.ts";
import { LruMap } from "../lru-map.ts";
import type { RecordedCall } from "../../protocol/calls.ts";
import type { Message, Tool } from "../../protocol/chat.ts";
import type { NodeDb } from "./db.ts";
import { calls, sessions } from "./schema.ts";
import { commonPrefixLength, decodeFloats, decodeIds, encodeFloats, encodeIds } from "./token-codec.ts";

/** How many recent calls per session are kept in memory as base candidates. */
const RECENT_PER_SESSION = 4;
const DEFAULT_MAX_SESSIONS = 1_000;

interface Expanded {
  seq: number;
  /** The call's prompt followed by its sampled output: what the next prompt usually extends. */
  context: number[] | null;
  /** The request's messages, each serialised once for cheap prefix comparison. */
  messages: string[];
  /** The request's tools, serialised once for cheap comparison. */
  tools: string;
  /** Estimated heap bytes of the above (for the shared cache budget). */
  bytes: number;
}

interface Base {
  seq: number;
  len: number;
}

type CallRow = typeof calls.$inferSelect;
type CallInsert = typeof calls.$inferInsert;

/** The insert every LLM call makes, built once (query building cost more than SQLite's work). */
function prepareInsert(db: NodeDb) {
  const columns = Object.keys(getTableColumns(calls)) as Array<keyof CallInsert>;
  return db
    .insert(calls)
    .values(Object.fromEntries(columns.map((c) => [c, sql.placeholder(c)])) as unknown as CallInsert)
    .prepare();
}

export class CallsRepo {
  /** Recent calls of each session, newest last (rebuilt from disk on demand). */
  private readonly recent: LruMap<string, Expanded[]>;
  private readonly insertStatement: ReturnType<typeof prepareInsert>;

  /** `maxSessions`: sessions whose recent calls stay in memory (others are re-read on their next call). */
  constructor(
    private readonly db: NodeDb,
    maxSessions = DEFAULT_MAX_SESSIONS,
  ) {
    this.insertStatement = prepareInsert(db);
    this.recent = new LruMap(maxSessions, (list, sessionId) => list.reduce((sum, e) => sum + e.bytes, heapBytes.string(sessionId) + heapBytes.entry));
  }

  /** Counts the recent calls kept per session against the gateway's shared cache budget. */
  shareCacheBudget(budget: CacheBudget): void {
    this.recent.shareBudget(budget);
  }

  async insert(call: RecordedCall): Promise<void> {
    const expanded = expand(call);
    const recent = await this.recentOf(call.sessionId);
    // Calls finish out of order (sub-agents, parallel calls); `list` rebuilds in seq order, so a
    // call may only be stored against an earlier seq.
    const candidates = recent.filter((c) => c.seq < call.seq);
    const promptBase = call.promptIds ? longestBase(candidates, (c) => (c.context ? commonPrefixLength(c.context, call.promptIds!) : 0)) : undefined;
    const messagesBase = longestBase(candidates, (c) => commonPrefixLength(c.messages, expanded.messages));
    const toolsBase = call.request.tools.length > 0 ? candidates.findLast((c) => c.tools === expanded.tools) : undefined;
    const row: CallInsert = {
      sessionId: call.sessionId,
      seq: call.seq,
      dialect: call.dialect,
      request: { ...call.request, messages: call.request.messages.slice(messagesBase?.len ?? 0), tools: toolsBase ? [] : call.request.tools },
      messagesBaseSeq: messagesBase?.seq ?? null,
      messagesBaseLen: messagesBase?.len ?? 0,
      toolsBaseSeq: toolsBase?.seq ?? null,
      response: call.response,
      promptBaseSeq: promptBase?.seq ?? null,
      promptBaseLen: promptBase?.len ?? 0,
      promptSuffix: call.promptIds ? encodeIds(call.promptIds.slice(promptBase?.len ?? 0)) : null,
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
    };
    try {
      await this.insertStatement.execute(row);
    } catch (err) {
      this.recent.delete(call.sessionId);
      if (!(await this.sessionExists(call.sessionId))) {
        throw new PolarError("not_found", `session ${call.sessionId} was deleted while this call was in flight; the call was not recorded`);
      }
      throw err;
    }
    recent.push(expanded);
    if (recent.length > RECENT_PER_SESSION) recent.shift();
    // Set again (not only mutated) so the budget re-measures the grown entry.
    this.recent.set(call.sessionId, recent);
  }

  /** All recorded calls of a session (optionally up to `maxSeq`), in seq order, fully rebuilt. */
  async list(sessionId: string, maxSeq?: number): Promise<RecordedCall[]> {
    const where = maxSeq === undefined ? eq(calls.sessionId, sessionId) : and(eq(calls.sessionId, sessionId), lte(calls.seq, maxSeq));
    const rows = await this.db.select().from(calls).where(where).orderBy(asc(calls.seq));
    const bases: Bases = { contexts: new Map(), messages: new Map(), tools: new Map() };
    return rows.map((r) => {
      const call = rebuildRow(r, bases);
      if (call.promptIds) bases.contexts.set(r.seq, call.outputIds ? call.promptIds.concat(call.outputIds) : call.promptIds);
      bases.messages.set(r.seq, call.request.messages);
      bases.tools.set(r.seq, call.request.tools);
      return call;
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
  const context = call.promptIds ? [...call.promptIds, ...(call.outputIds ?? [])] : null;
  const messages = call.request.messages.map((m) => JSON.stringify(m));
  const tools = JSON.stringify(call.request.tools);
  const bytes = heapBytes.entry + heapBytes.numbers(context) + messages.reduce((sum, m) => sum + heapBytes.string(m), 0) + heapBytes.string(tools);
  return { seq: call.seq, context, messages, tools, bytes };
}

function longestBase(candidates: readonly Expanded[], shared: (c: Expanded) => number): Base | undefined {
  let best: Base | undefined;
  for (const c of candidates) {
    const len = shared(c);
    if (len > 0 && (!best || len > best.len)) best = { seq: c.seq, len };
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
    sessionId: r.sessionId,
    seq: r.seq,
    dialect: r.dialect as RecordedCall["dialect"],
    request,
    response: r.response as RecordedCall["response"],
    promptIds,
    outputIds: r.outputIds ? decodeIds(r.outputIds) : null,
    logprobs: r.logprobs ? decodeFloats(r.logprobs) : null,
    engineUrl: r.engineUrl,
    policyVersion: r.policyVersion,
    timings: { queuedMs: r.queuedMs, engineMs: r.engineMs, totalMs: r.totalMs },
    error: r.error as RecordedCall["error"],
    notes: r.notes as RecordedCall["notes"],
    startedAt: r.startedAt,
  };
}
