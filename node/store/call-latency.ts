// Why: the coordinator's metrics show gateway call latency per node; the node reads it from the
// calls its gateway recorded since the last heartbeat instead of instrumenting the hot path.
import { gt, sql } from "drizzle-orm";
import type { NodeDb } from "./db.ts";
import { calls } from "./schema.ts";

export class CallLatency {
  private since = new Date().toISOString();

  constructor(private readonly db: NodeDb) {}

  /** Calls started since the previous read: count, summed and max total latency (ms). */
  async take(): Promise<{ calls: number; total_ms: number; max_ms: number }> {
    const now = new Date().toISOString();
    const [row] = await this.db
      .select({ n: sql<number>`count(*)`, sum: sql<number | null>`sum(${calls.totalMs})`, max: sql<number | null>`max(${calls.totalMs})` })
      .from(calls)
      .where(gt(calls.startedAt, this.since));
    this.since = now;
    return { calls: Number(row?.n ?? 0), total_ms: Number(row?.sum ?? 0), max_ms: Number(row?.max ?? 0) };
  }
}
