// Why: the pipeline's durable record — tasks, rollouts, every state change with its time, and
// each result written before it is reported — so a restarted node can account for every rollout.
import { and, asc, eq, inArray, isNotNull, lt, notInArray, sql } from "drizzle-orm";
import type { Statement } from "../../lib/sqlite.ts";
import type { NodeDb } from "./db.ts";
import type { SessionResult, SessionResultStatus, TaskRequest, TaskStatusWord } from "../../protocol/rollout.ts";
import { TERMINAL_STATES, type RolloutState } from "../pipeline/states.ts";
import { coordinatorAssignments, rolloutEvents, rolloutResults, rollouts, rolloutTasks } from "./schema.ts";

export interface NewRollout {
  id: string;
  sampleIndex: number;
  priority: number;
}

export interface RolloutRow {
  id: string;
  taskId: string;
  sampleIndex: number;
  state: RolloutState;
  gatewaySessionId: string | null;
}

export interface TaskRow {
  taskId: string;
  request: TaskRequest;
  status: TaskStatusWord;
  createdAt: string;
  finishedAt: string | null;
  callbackDoneAt: string | null;
}

export interface RolloutEventRow {
  seq: number;
  fromState: string | null;
  toState: string;
  at: string;
  detail: Record<string, unknown> | null;
}

export class RolloutsRepo {
  constructor(private readonly db: NodeDb) {}

  /**
   * Stores a task and its rollouts (each QUEUED, with its first event) atomically. A finished
   * task of the same id is kept, not replaced: it moves to `<id>#<created_at>` with its rollouts
   * and results (ids with `#` are never rollout-API ids), and is pruned with the others.
   */
  async createTask(taskId: string, request: TaskRequest, items: NewRollout[]): Promise<void> {
    const now = new Date().toISOString();
    const earlier = await this.task(taskId);
    const statements: Statement[] = [
      ...(earlier ? this.archiveStatements(earlier) : []),
      this.db.insert(rolloutTasks).values({ taskId, request, status: "running", createdAt: now }),
      ...items.flatMap((r) => [
        this.db
          .insert(rollouts)
          .values({ id: r.id, taskId, sampleIndex: r.sampleIndex, state: "QUEUED", priority: r.priority, createdAt: now, updatedAt: now }),
        this.db.insert(rolloutEvents).values({ rolloutId: r.id, seq: 0, fromState: null, toState: "QUEUED", at: now }),
      ]),
    ];
    await this.db.batch(statements);
  }

  private archiveStatements(earlier: TaskRow) {
    const archived = `${earlier.taskId}#${earlier.createdAt}`;
    return [
      this.db.insert(rolloutTasks).values({ ...earlier, taskId: archived }),
      this.db.update(rollouts).set({ taskId: archived }).where(eq(rollouts.taskId, earlier.taskId)),
      this.db.update(rolloutResults).set({ taskId: archived }).where(eq(rolloutResults.taskId, earlier.taskId)),
      this.db.delete(rolloutTasks).where(eq(rolloutTasks.taskId, earlier.taskId)),
    ];
  }

  /** Finished tasks older than `before` (ISO time), with their rollouts, events and results; never a rollout a coordinator has not acknowledged. */
  async pruneFinishedTasks(before: string): Promise<number> {
    const gone = await this.db
      .delete(rolloutTasks)
      .where(
        and(
          isNotNull(rolloutTasks.finishedAt),
          lt(rolloutTasks.finishedAt, before),
          sql`not exists (select 1 from ${coordinatorAssignments} join ${rollouts} on ${rollouts.id} = ${coordinatorAssignments.rolloutId} where ${rollouts.taskId} = ${rolloutTasks.taskId} and ${coordinatorAssignments.ackedAt} is null)`,
        ),
      )
      .returning({ id: rolloutTasks.taskId });
    return gone.length;
  }

  /** Number of rollouts a task has. */
  async rolloutCount(taskId: string): Promise<number> {
    const [row] = await this.db
      .select({ n: sql<number>`count(*)` })
      .from(rollouts)
      .where(eq(rollouts.taskId, taskId));
    return Number(row?.n ?? 0);
  }

  async recordTransition(rolloutId: string, seq: number, from: RolloutState, to: RolloutState, at: string, detail?: Record<string, unknown>): Promise<void> {
    await this.db.batch([
      this.db.update(rollouts).set({ state: to, updatedAt: at }).where(eq(rollouts.id, rolloutId)),
      this.db.insert(rolloutEvents).values({ rolloutId, seq, fromState: from, toState: to, at, detail: detail ?? null }),
    ]);
  }

  async setGatewaySession(rolloutId: string, sessionId: string): Promise<void> {
    await this.db.update(rollouts).set({ gatewaySessionId: sessionId }).where(eq(rollouts.id, rolloutId));
  }

  async saveResult(rolloutId: string, taskId: string, status: SessionResultStatus, result: SessionResult): Promise<void> {
    await this.db
      .insert(rolloutResults)
      .values({ rolloutId, taskId, status, result, createdAt: new Date().toISOString() })
      .onConflictDoUpdate({ target: rolloutResults.rolloutId, set: { status, result } });
  }

  async setTaskStatus(taskId: string, status: TaskStatusWord, finished: boolean): Promise<void> {
    await this.db
      .update(rolloutTasks)
      .set({ status, ...(finished ? { finishedAt: new Date().toISOString() } : {}) })
      .where(eq(rolloutTasks.taskId, taskId));
  }

  async markCallbackDone(taskId: string): Promise<void> {
    await this.db.update(rolloutTasks).set({ callbackDoneAt: new Date().toISOString() }).where(eq(rolloutTasks.taskId, taskId));
  }

  /** Rollouts not in a terminal state: what a restarted node must account for. */
  async unfinishedRollouts(): Promise<RolloutRow[]> {
    const rows = await this.db
      .select()
      .from(rollouts)
      .where(notInArray(rollouts.state, [...TERMINAL_STATES]));
    return rows.map(toRolloutRow);
  }

  async rolloutsOf(taskId: string): Promise<RolloutRow[]> {
    const rows = await this.db.select().from(rollouts).where(eq(rollouts.taskId, taskId)).orderBy(asc(rollouts.sampleIndex));
    return rows.map(toRolloutRow);
  }

  async task(taskId: string): Promise<TaskRow | undefined> {
    const found = await this.db.select().from(rolloutTasks).where(eq(rolloutTasks.taskId, taskId)).limit(1);
    return found[0];
  }

  /** Tasks whose status is one of `statuses`. */
  async tasksIn(statuses: TaskStatusWord[]): Promise<TaskRow[]> {
    return this.db.select().from(rolloutTasks).where(inArray(rolloutTasks.status, statuses));
  }

  /** Tasks that finished but whose callback was not delivered yet. */
  async pendingCallbacks(): Promise<TaskRow[]> {
    const rows = await this.db
      .select()
      .from(rolloutTasks)
      .where(inArray(rolloutTasks.status, ["completed", "failed", "cancelled"]));
    return rows.filter((t) => t.finishedAt !== null && t.callbackDoneAt === null);
  }

  async results(taskId: string): Promise<SessionResult[]> {
    const rows = await this.db.select().from(rolloutResults).where(eq(rolloutResults.taskId, taskId)).orderBy(asc(rolloutResults.createdAt));
    return rows.map((r) => r.result);
  }

  async result(rolloutId: string): Promise<SessionResult | undefined> {
    const found = await this.db.select().from(rolloutResults).where(eq(rolloutResults.rolloutId, rolloutId)).limit(1);
    return found[0]?.result;
  }

  async events(rolloutId: string): Promise<RolloutEventRow[]> {
    return this.db
      .select({
        seq: rolloutEvents.seq,
        fromState: rolloutEvents.fromState,
        toState: rolloutEvents.toState,
        at: rolloutEvents.at,
        detail: rolloutEvents.detail,
      })
      .from(rolloutEvents)
      .where(eq(rolloutEvents.rolloutId, rolloutId))
      .orderBy(asc(rolloutEvents.seq));
  }
}

function toRolloutRow(r: typeof rollouts.$inferSelect): RolloutRow {
  return { id: r.id, taskId: r.taskId, sampleIndex: r.sampleIndex, state: r.state, gatewaySessionId: r.gatewaySessionId };
}
