// Why: vLLM and SGLang answer every call with the whole prompt's token ids (25k ids, ~150 KB of a
// 160 KB answer to a 100 KB coding-agent request), and JSON.parse of them was the call path's
// costliest step (bench/RESULTS.md, "Gateway CPU per call"). An agent's prompt extends the one it
// sent before, so the answer's id list starts with the session's previous list character for
// character: compared as text (a memcmp), only the new tail is parsed. Anything unexpected — no
// previous list, another layout, a list that is not plain integers — parses the whole answer, so
// the result is always what JSON.parse(text) gives.
import { CacheBudget, heapBytes } from "../../cache-budget.ts";
import { LruMap } from "../../lru-map.ts";

const KEY = '"prompt_token_ids":[';
/** Stands in for the list while the rest of the answer is parsed (a list there is never a number). */
const PLACEHOLDER = 0;
/** Sessions held at most; the shared byte budget is the real bound. */
const MAX_SESSIONS = 100_000;
/** Bound until a shared budget is given (in the gateway it always is). */
const DEFAULT_BYTES = 64 * 1024 * 1024;

interface Previous {
  /** The previous answer's list text from its `[` up to, not including, its `]`. */
  text: string;
  ids: number[];
}

/** Where an engine's answer holds `prompt_token_ids`: vLLM at the top, SGLang in `choices[0]`. */
export type PromptIdsHolder = (answer: Record<string, unknown>) => unknown;

export class PromptIdsJson {
  private readonly sessions = new LruMap<string, Previous>(
    MAX_SESSIONS,
    (previous, sessionId) => heapBytes.string(previous.text) + heapBytes.numbers(previous.ids) + heapBytes.string(sessionId) + heapBytes.entry,
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

  /** JSON.parse(text), reusing the session's previous prompt ids where the answer's list starts with them. */
  parse(sessionId: string | null, text: string): unknown {
    const open = text.indexOf(KEY) + KEY.length - 1;
    if (open < KEY.length - 1) return JSON.parse(text);
    const close = text.indexOf("]", open);
    try {
      const ids = this.ids(sessionId, text, open, close);
      const answer = JSON.parse(text.slice(0, open) + PLACEHOLDER + text.slice(close + 1)) as Record<string, unknown>;
      const holder = this.holder(answer) as Record<string, unknown> | undefined;
      if (!Array.isArray(ids) || holder?.prompt_token_ids !== PLACEHOLDER) return JSON.parse(text);
      holder.prompt_token_ids = ids;
      if (sessionId !== null) this.sessions.set(sessionId, { text: text.slice(open, close), ids });
      return answer;
    } catch {
      return JSON.parse(text); // throws the parser's own error for text that is not JSON
    }
  }

  /** The list between `open` (its `[`) and `close` (its `]`): the previous list plus the parsed tail when it extends it. */
  private ids(sessionId: string | null, text: string, open: number, close: number): unknown {
    const previous = sessionId === null ? undefined : this.sessions.get(sessionId);
    const end = previous ? open + previous.text.length : -1;
    if (previous && end <= close && (text[end] === "," || text[end] === "]") && text.startsWith(previous.text, open)) {
      // A fresh array even when nothing was added (the recorded call owns its ids); concat is
      // JSC's memcpy path for integer arrays, several times faster than slice here.
      return previous.ids.concat(text[end] === "]" ? [] : JSON.parse(`[${text.slice(end + 1, close + 1)}`));
    }
    return JSON.parse(text.slice(open, close + 1));
  }
}
