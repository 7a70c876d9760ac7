// Why: a recorded call is stored against an earlier call of its session (calls-repo.ts), and the
// few most recent calls are kept in memory as the candidates. An agent's context extends its
// previous one, so once a newer call is known to extend an older candidate, the older one points
// into the newer call's arrays instead of keeping its own: a session holds about one context
// (ids, messages, tools) in memory, not one per recent call, and what it dropped dies young.
import type { RecordedCall } from "../../protocol/calls.ts";
import type { Message, Tool } from "../../protocol/chat.ts";
import { heapBytes } from "../cache-budget.ts";
import type { CallRecord } from "./calls-repo.ts";
import { sameJson } from "./same-json.ts";
import { concatPrefixLength, type TokenIdList } from "./token-codec.ts";

/** How many recent calls per session are kept as base candidates. */
export const RECENT_PER_SESSION = 4;

const NO_IDS: readonly number[] = [];

/** An earlier call a new one may be stored against. */
interface Candidate {
  seq: number;
  /** Its context — the prompt, then the sampled output — is `head[0, headLen)` followed by `tail`; null: no prompt ids. */
  head: TokenIdList | null;
  headLen: number;
  tail: TokenIdList;
  /** Its messages are `messages[0, messagesLen)`. */
  messages: readonly Message[];
  messagesLen: number;
  tools: readonly Tool[];
}

/** How much of an earlier call (by seq) a new call shares. */
export interface Base {
  seq: number;
  len: number;
}

export interface Bases {
  prompt: Base | undefined;
  messages: Base | undefined;
  /** Seq of a call whose tools equal the new call's. */
  tools: number | undefined;
}

/** Estimated heap bytes of an array the candidates hold (walked once per array). */
const arrayBytes = new WeakMap<object, number>();
function bytesOf(array: readonly unknown[], measure: (a: readonly unknown[]) => number): number {
  let bytes = arrayBytes.get(array);
  if (bytes === undefined) arrayBytes.set(array, (bytes = measure(array)));
  return bytes;
}

const contextLength = (c: Candidate) => (c.head ? c.headLen + c.tail.length : 0);

/** The leading messages `a[0, aLen)` and `b` have in common. */
function sharedMessages(a: readonly Message[], aLen: number, b: readonly Message[]): number {
  const n = Math.min(aLen, b.length);
  let i = 0;
  while (i < n && sameJson(a[i], b[i])) i++;
  return i;
}

/**
 * The candidate sharing the longest prefix (newest first on a tie). `bound` is an upper limit of
 * `shared`: a candidate that cannot beat the best so far is not compared, so a prompt that
 * extends the newest call costs one comparison, not one per recent call.
 */
function longestBase(candidates: readonly Candidate[], bound: (c: Candidate) => number, shared: (c: Candidate) => number): Base | undefined {
  let best: Base | undefined;
  for (let i = candidates.length - 1; i >= 0; i--) {
    const c = candidates[i]!;
    if (bound(c) <= (best?.len ?? 0)) continue;
    const len = shared(c);
    if (len > (best?.len ?? 0)) best = { seq: c.seq, len };
  }
  return best;
}

/** One session's recent calls, oldest first. */
export class RecentCalls {
  private readonly list: Candidate[] = [];

  /** The candidates rebuilt from stored calls (each with arrays of its own). */
  static of(calls: readonly RecordedCall[]): RecentCalls {
    const recent = new RecentCalls();
    for (const call of calls.slice(-RECENT_PER_SESSION)) recent.list.push(candidate(call));
    return recent;
  }

  /**
   * The earlier calls `call` is best stored against. Calls finish out of order (sub-agents,
   * parallel calls) and a session is rebuilt in seq order, so only earlier seqs are candidates.
   */
  basesFor(call: CallRecord): Bases {
    const candidates = this.list.filter((c) => c.seq < call.seq);
    const prompt = call.prompt_ids;
    const messages = call.request.messages;
    const tools = call.request.tools;
    return {
      prompt: prompt
        ? longestBase(
            candidates,
            (c) => Math.min(prompt.length, contextLength(c)),
            (c) => concatPrefixLength(c.head!, c.tail, prompt, c.headLen),
          )
        : undefined,
      messages: longestBase(
        candidates,
        (c) => Math.min(messages.length, c.messagesLen),
        (c) => sharedMessages(c.messages, c.messagesLen, messages),
      ),
      tools: tools.length > 0 ? candidates.findLast((c) => sameJson(c.tools, tools))?.seq : undefined,
    };
  }

  /** Adds a stored call; the candidates it extends now point into its arrays. */
  add(call: CallRecord, bases: Bases): void {
    const added = candidate(call);
    const find = (seq: number | undefined) => (seq === undefined ? undefined : this.list.find((c) => c.seq === seq));
    const prompt = find(bases.prompt?.seq);
    if (prompt && call.prompt_ids && bases.prompt!.len === contextLength(prompt)) {
      // The new prompt starts with that call's whole context, and so with every context that is
      // a prefix of the same array (those were themselves re-pointed into it, with no tail).
      const [old, oldLen] = [prompt.head, prompt.headLen];
      for (const c of this.list) {
        if (c !== prompt && c.head === old && c.tail.length === 0 && c.headLen <= oldLen) c.head = call.prompt_ids;
      }
      Object.assign(prompt, { head: call.prompt_ids, headLen: bases.prompt!.len, tail: NO_IDS });
    }
    const messages = find(bases.messages?.seq);
    if (messages && bases.messages!.len === messages.messagesLen) {
      const [old, oldLen] = [messages.messages, messages.messagesLen];
      for (const c of this.list) if (c.messages === old && c.messagesLen <= oldLen) c.messages = call.request.messages;
    }
    const tools = find(bases.tools);
    if (tools) {
      const old = tools.tools;
      for (const c of this.list) if (c.tools === old) c.tools = call.request.tools;
    }
    this.list.push(added);
    if (this.list.length > RECENT_PER_SESSION) this.list.shift();
  }

  /** Estimated heap bytes of what the candidates hold, each shared array counted once. */
  bytes(): number {
    const seen = new Set<object>();
    let bytes = heapBytes.slots(this.list.length);
    const count = (array: readonly unknown[], measure: (a: readonly unknown[]) => number) => {
      if (seen.has(array)) return;
      seen.add(array);
      bytes += bytesOf(array, measure);
    };
    const countIds = (ids: TokenIdList) => {
      // Views of one buffer (a session's prompt ids, prompt-ids-json.ts) count the buffer once.
      if (!(ids instanceof Uint32Array)) return count(ids, (a) => heapBytes.numbers(a as number[]));
      if (seen.has(ids.buffer)) return;
      seen.add(ids.buffer);
      bytes += ids.buffer.byteLength;
    };
    for (const c of this.list) {
      bytes += heapBytes.entry;
      if (c.head) countIds(c.head);
      countIds(c.tail);
      count(c.messages, heapBytes.json);
      count(c.tools, heapBytes.json);
    }
    return bytes;
  }
}

function candidate(call: CallRecord): Candidate {
  return {
    seq: call.seq,
    head: call.prompt_ids,
    headLen: call.prompt_ids?.length ?? 0,
    tail: call.output_ids ?? NO_IDS,
    messages: call.request.messages,
    messagesLen: call.request.messages.length,
    tools: call.request.tools,
  };
}
