// Why: every call of a session gets the next sequence number when it starts, although calls
// finish (and are stored) out of order. Numbers continue from the store after a restart; a
// session with calls in flight is never forgotten (that could hand out a number twice), and
// idle sessions are kept in a bounded LRU so sessions that never close do not grow memory.
import { heapBytes, type CacheBudget } from "../cache-budget.ts";
import { LruMap } from "../lru-map.ts";

interface Active {
  last: Promise<number>;
  inFlight: number;
}

export class SeqAllocator {
  private readonly active = new Map<string, Active>();
  private readonly idle: LruMap<string, number>;

  /** `lastStoredSeq` reads the highest stored seq of a session (-1 when none). */
  constructor(
    private readonly lastStoredSeq: (sessionId: string) => Promise<number>,
    maxIdleSessions = 10_000,
  ) {
    this.idle = new LruMap(maxIdleSessions, (_seq, sessionId) => heapBytes.string(sessionId) + heapBytes.entry);
  }

  /** Counts the idle sessions' entries against the gateway's shared cache budget. */
  shareCacheBudget(budget: CacheBudget): void {
    this.idle.shareBudget(budget);
  }

  /** The next seq of the session; pair every call with one `release` once the call is stored. */
  allocate(sessionId: string): Promise<number> {
    let entry = this.active.get(sessionId);
    if (!entry) {
      const known = this.idle.get(sessionId);
      entry = { last: known === undefined ? this.lastStoredSeq(sessionId) : Promise.resolve(known), inFlight: 0 };
      this.active.set(sessionId, entry);
    }
    entry.inFlight++;
    const next = entry.last.then((seq) => seq + 1);
    entry.last = next;
    return next;
  }

  release(sessionId: string): void {
    const entry = this.active.get(sessionId);
    if (!entry || --entry.inFlight > 0) return;
    this.active.delete(sessionId);
    // A failed store read leaves nothing behind: the next call reads the store again.
    entry.last.then(
      (seq) => {
        if (!this.active.has(sessionId)) this.idle.set(sessionId, seq);
      },
      () => {},
    );
  }

  forget(sessionId: string): void {
    this.idle.delete(sessionId);
  }
}
