// Why: an agent re-sends its whole conversation on every call, so each call parses a fresh copy
// of messages its session's previous call already holds (~100 KB of tool output at a coding
// agent's size). The copy lives as long as the call — across the engine's wait, so JSC's young
// collections promote it — and is then kept as the session's latest context by the store's and
// the engine body's caches, only to become garbage at the next call: old-generation garbage that
// waits for a full collection and raises a busy gateway's peak RSS (bench/RESULTS.md, "Gateway
// memory"). Replacing, as soon as a request is parsed, each message (and tool) equal to the
// previous call's — sameJson, the store's own test for sharing one — by that call's object lets
// the copy die young, and the caches' later comparisons become identity checks.
import { heapBytes, type CacheBudget } from "../cache-budget.ts";
import { LruMap } from "../lru-map.ts";
import { sameJson } from "../store/same-json.ts";
import type { PivotMessage, PivotRequest, PivotTool } from "./pivot.ts";

/** Sessions held at most; the shared byte budget is the real bound. */
const MAX_SESSIONS = 100_000;

interface Latest {
  messages: readonly PivotMessage[];
  tools: readonly PivotTool[];
}

/** Replaces elements of `list` equal to those at the same place in `previous` by them, up to the first that differs. */
function internPrefix<T>(list: T[], previous: readonly T[]): void {
  const n = Math.min(list.length, previous.length);
  for (let i = 0; i < n; i++) {
    if (list[i] === previous[i]) continue;
    if (!sameJson(list[i], previous[i])) return;
    list[i] = previous[i]!;
  }
}

export class SessionMessages {
  /**
   * The latest call's arrays per session. The objects they point at are the recorded calls' own,
   * counted by the store's recent calls: only the arrays are charged here.
   */
  private readonly sessions = new LruMap<string, Latest>(
    MAX_SESSIONS,
    (latest, sessionId) => heapBytes.slots(latest.messages.length + latest.tools.length) + heapBytes.string(sessionId) + heapBytes.entry,
  );

  shareCacheBudget(budget: CacheBudget): void {
    this.sessions.shareBudget(budget);
  }

  /**
   * Makes `request`'s messages and tools that equal the session's previous call's those very
   * objects, in place: the arrays are the call's own, fresh from its dialect's parse.
   */
  intern(sessionId: string, request: PivotRequest): void {
    const previous = this.sessions.get(sessionId);
    if (previous) {
      internPrefix(request.messages, previous.messages);
      internPrefix(request.tools, previous.tools);
    }
    this.sessions.set(sessionId, { messages: request.messages, tools: request.tools });
  }

  forget(sessionId: string): void {
    this.sessions.delete(sessionId);
  }
}
