// Why: vLLM and SGLang answer every call with the whole prompt's token ids (25k ids, ~150 KB of a
// 160 KB answer to a 100 KB coding-agent request), and JSON.parse of them was the call path's
// costliest step (bench/RESULTS.md, "Gateway CPU per call"); as a fresh 25k-element array per
// call, and the answer's text kept to compare the next one against, they were also the largest
// share of the garbage that sets a busy gateway's peak RSS ("Gateway memory"). An agent's prompt
// extends the one it sent before, so the answer's id list starts with the session's previous
// list byte for byte: compared as bytes (a memcmp), only the new tail is parsed, and appended to
// the session's id buffer — each call's ids are a Uint32Array view of it, which later calls only
// ever extend past, so a call allocates nothing for the ids it shares. The answer is read as
// bytes and never becomes a string but for its small remainder. Anything unexpected — no previous
// list, another layout, a list that is not plain integers — parses the whole answer, so the
// result is always what JSON.parse(text) gives (with the ids as a Uint32Array).
import { CacheBudget, heapBytes } from "../../cache-budget.ts";
import { LruMap } from "../../lru-map.ts";

const KEY = '"prompt_token_ids":[';
/** Stands in for the list while the rest of the answer is parsed (a list there is never a number). */
const PLACEHOLDER = 0;
/** Sessions held at most; the shared byte budget is the real bound. */
const MAX_SESSIONS = 100_000;
/** Bound until a shared budget is given (in the gateway it always is). */
const DEFAULT_BYTES = 64 * 1024 * 1024;

const COMMA = 0x2c;
const CLOSE = 0x5d;
const ZERO = 0x30;
const NINE = 0x39;

const decoder = new TextDecoder();

/**
 * A session's last id list: `list[0, listLength)` is its text from the `[` up to, not including,
 * the `]`; `ids[0, idsLength)` its ids. Both only grow in place: the ids below `idsLength` were
 * handed out as views and never change.
 */
interface Previous {
  list: Uint8Array;
  listLength: number;
  ids: Uint32Array;
  idsLength: number;
}

/** Where an engine's answer holds `prompt_token_ids`: vLLM at the top, SGLang in `choices[0]`. */
export type PromptIdsHolder = (answer: Record<string, unknown>) => unknown;

/** `bytes` as a Buffer (a view, no copy), for its native search and compare. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Room to grow into, as a share of the size: an agent's next prompt adds a turn (~1% of a long
 * context), so an eighth more is several calls' worth, and little held for nothing.
 */
const GROWTH = 1.125;

/** A copy of `array[0, length)` in an array of at least `need` elements (and room to grow into). */
function grown<T extends Uint8Array | Uint32Array>(array: T, length: number, need: number, make: (n: number) => T): T {
  if (need <= array.length) return array;
  const next = make(Math.max(Math.ceil(need * GROWTH), 64));
  next.set(array.subarray(0, length));
  return next;
}

/**
 * Parses the ids in `bytes[from, to)` — `id(,id)*` — appending them to `into`'s; false when the
 * text is anything but one or more plain JSON integers in [0, 2^32) with no whitespace (the
 * caller then parses the whole answer with JSON.parse).
 */
function appendIds(bytes: Uint8Array, from: number, to: number, into: Previous): boolean {
  let { ids, idsLength: at } = into;
  let i = from;
  if (i >= to) return false;
  for (;;) {
    const first = bytes[i]!;
    if (first < ZERO || first > NINE) return false;
    let value = first - ZERO;
    let j = i + 1;
    for (; j < to; j++) {
      const b = bytes[j]!;
      if (b === COMMA) break;
      if (b < ZERO || b > NINE || value === 0) return false; // not a digit, or a leading zero
      value = value * 10 + (b - ZERO);
      if (value > 0xffffffff) return false;
    }
    if (at === ids.length) ids = grown(ids, at, at + 1, (n) => new Uint32Array(n));
    ids[at++] = value;
    if (j === to) break;
    i = j + 1;
    if (i === to) return false; // a trailing comma
  }
  into.ids = ids;
  into.idsLength = at;
  return true;
}

export class PromptIdsJson {
  private readonly sessions = new LruMap<string, Previous>(
    MAX_SESSIONS,
    (previous, sessionId) => previous.list.byteLength + previous.ids.byteLength + heapBytes.string(sessionId) + heapBytes.entry,
  );

  constructor(private readonly holder: PromptIdsHolder) {
    this.sessions.shareBudget(new CacheBudget(DEFAULT_BYTES));
  }

  shareCacheBudget(budget: CacheBudget): void {
    this.sessions.shareBudget(budget);
  }

  forget(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  /** JSON.parse of the answer's UTF-8 `bytes`, its prompt ids a Uint32Array that shares the session's earlier ids. */
  parse(sessionId: string | null, bytes: Uint8Array): unknown {
    const buffer = asBuffer(bytes);
    const keyAt = buffer.indexOf(KEY);
    if (keyAt < 0) return JSON.parse(decoder.decode(bytes));
    const open = keyAt + KEY.length - 1;
    const close = buffer.indexOf(CLOSE, open);
    if (close < 0) return JSON.parse(decoder.decode(bytes)); // throws the parser's own error
    const list = this.list(sessionId, buffer, open, close);
    if (!list) return JSON.parse(decoder.decode(bytes));
    let answer: Record<string, unknown>;
    try {
      answer = JSON.parse(`${buffer.toString("utf8", 0, open)}${PLACEHOLDER}${buffer.toString("utf8", close + 1)}`) as Record<string, unknown>;
    } catch {
      return JSON.parse(decoder.decode(bytes)); // throws the parser's own error for text that is not JSON
    }
    const holder = this.holder(answer) as Record<string, unknown> | undefined;
    if (holder?.prompt_token_ids !== PLACEHOLDER) return JSON.parse(decoder.decode(bytes));
    holder.prompt_token_ids = list.ids.subarray(0, list.idsLength);
    if (sessionId !== null) this.sessions.set(sessionId, list);
    return answer;
  }

  /**
   * The list between `open` (its `[`) and `close` (its `]`): the session's previous one grown in
   * place when this one extends it, else a new one; null when it is not a plain list of ids.
   */
  private list(sessionId: string | null, bytes: Buffer, open: number, close: number): Previous | null {
    const previous = sessionId === null ? undefined : this.sessions.get(sessionId);
    const end = previous ? open + previous.listLength : -1;
    if (
      previous &&
      end <= close &&
      (bytes[end] === COMMA || end === close) &&
      Buffer.compare(bytes.subarray(open, end), previous.list.subarray(0, previous.listLength)) === 0
    ) {
      if (end === close) return previous;
      // Grown on a copy of the bookkeeping, so a list that fails to parse leaves the session's as it was.
      const next = { ...previous };
      if (!appendIds(bytes, end + 1, close, next)) return null;
      next.list = grown(next.list, next.listLength, close - open, (n) => new Uint8Array(n));
      next.list.set(bytes.subarray(end, close), next.listLength);
      next.listLength = close - open;
      return next;
    }
    // Room for ids of five digits and a comma (a 150k vocabulary's); smaller ids grow the buffer as they are parsed.
    const fresh: Previous = { list: new Uint8Array(close - open), listLength: close - open, ids: new Uint32Array(Math.ceil((close - open) / 6)), idsLength: 0 };
    if (close > open + 1 && !appendIds(bytes, open + 1, close, fresh)) return null;
    fresh.list.set(bytes.subarray(open, close));
    return fresh;
  }
}
