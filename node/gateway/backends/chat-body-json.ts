// Why: an agent re-sends its whole conversation on every call, and serialising it for the engine
// is the gateway's costliest step after parsing (JSON-escaping 100 KB of code with a newline every
// line costs ~6× a plain copy). Messages unchanged since the session's previous call keep the JSON
// they had then; only new messages are serialised. Held JSON is bounded in bytes across sessions:
// in the gateway by the byte budget all per-session caches share, on its own by a budget of its own.
import { CacheBudget, heapBytes } from "../../cache-budget.ts";
import { LruMap } from "../../lru-map.ts";
import { sameJson } from "../../store/same-json.ts";
import type { PivotMessage } from "../pivot.ts";

/** Bound on the JSON held for all sessions together until a shared budget is given (least recently used sessions go first). */
export const DEFAULT_MESSAGE_JSON_BYTES = 64 * 1024 * 1024;
/** Sessions held at most; the bytes are the real bound. */
const MAX_SESSIONS = 100_000;

interface Held {
  /** The call's pivot messages (the recorded request's own objects: counted by the store's cache, not here). */
  messages: readonly PivotMessage[];
  json: string[];
  /** Estimated heap bytes of `json`. */
  bytes: number;
}

export class ChatBodyJson {
  /** Per session; the least recently used session goes first. */
  private readonly sessions = new LruMap<string, Held>(MAX_SESSIONS, (held, sessionId) => held.bytes + heapBytes.string(sessionId) + heapBytes.entry);

  constructor(budgetBytes = DEFAULT_MESSAGE_JSON_BYTES) {
    this.sessions.shareBudget(new CacheBudget(budgetBytes));
  }

  /** Counts the held JSON against the gateway's shared cache budget instead of its own. */
  shareCacheBudget(budget: CacheBudget): void {
    this.sessions.shareBudget(budget);
  }

  /**
   * The engine body as JSON: `rest` (everything but the messages) with `"messages"` holding
   * `wire`, the engine-format messages converted from `pivot` one to one. A message whose pivot
   * equals the one at the same place in the session's previous call reuses that call's JSON.
   */
  serialize(sessionId: string, pivot: readonly PivotMessage[], wire: readonly unknown[], rest: Record<string, unknown>): string {
    const previous = this.sessions.get(sessionId);
    const json: string[] = new Array(wire.length);
    let bytes = heapBytes.slots(json.length);
    let reusable = previous !== undefined;
    for (let i = 0; i < wire.length; i++) {
      reusable &&= i < previous!.messages.length && sameJson(pivot[i], previous!.messages[i]);
      json[i] = reusable ? previous!.json[i]! : JSON.stringify(wire[i]);
      bytes += heapBytes.string(json[i]!);
    }
    this.sessions.set(sessionId, { messages: pivot, json, bytes });
    const others = JSON.stringify(rest);
    const close = `]${others === "{}" ? "}" : `,${others.slice(1)}`}`;
    if (json.length === 0) return `{"messages":[${close}`;
    // One join builds the body in one allocation (a template around a join would build it twice: the join, then the flattened rope).
    const parts = json.slice();
    parts[0] = `{"messages":[${parts[0]}`;
    parts[parts.length - 1] = `${parts.at(-1)}${close}`;
    return parts.join(",");
  }

  forget(sessionId: string): void {
    this.sessions.delete(sessionId);
  }
}
