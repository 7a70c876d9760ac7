// Why: every durable step of the coordinator — a group accepted, a rollout assigned or requeued,
// a result stored or acknowledged — is one call here, written before anyone is told, and batched
// so that dispatching thousands of rollouts a second costs a few transactions, not thousands.
import { and, asc, eq, getTableColumns, inArray, isNotNull, isNull, lt, notInArray, sql } from "drizzle-orm";
import type { CoordinatorDb, CoordinatorStore, Statement } from "./db.ts";
import type { ReportedResultHeader } from "../../protocol/node-link.ts";
import type { GroupEndStatus } from "../../protocol/trainer-stream.ts";
import { isTerminalRolloutState, TERMINAL_ROLLOUT_STATES, type RolloutStateName, type TerminalRolloutState } from "../rollout-states.ts";
import { groupSampling, groups, meta, resultTraces, results, rollouts, taskStats, type GROUP_STATES } from "./schema.ts";

export type GroupRow = typeof groups.$inferSelect;
export type NewGroupRow = typeof groups.$inferInsert;
export type GroupSamplingRow = typeof groupSampling.$inferSelect;
export type NewGroupSamplingRow = typeof groupSampling.$inferInsert;
export type TaskStatsRow = typeof taskStats.$inferSelect;
export type RolloutRow = typeof rollouts.$inferSelect;
export type ResultRow = typeof results.$inferSelect;
/** A result with its trace blob (null: `session` holds the traces whole). */
export type ResultWithTraces = ResultRow & { traces: Buffer | null };
export type NewRollout = typeof rollouts.$inferInsert;

/** SQLite's bound-parameter limit divided by the widest row we insert. */
const INSERT_CHUNK = 500;

export interface Assigned {
  rolloutId: string;
  nodeId: string;
  attempt: number;
  policyVersion: number;
}

/** A terminal rollout with its result's status and reward (null when it has no result row). */
export type FinishedRollout = Pick<RolloutRow, "id" | "groupId"> & { state: TerminalRolloutState; status: TerminalRolloutState | null; reward: number | null };

export interface StoredResult {
  rolloutId: string;
  groupId: string;
  trainerId: string | null;
  /** The terminal state the rollout finishes in: the result's status. */
  status: TerminalRolloutState;
  reward: number | null;
  /** The session as stored: its traces without their token arrays when `traces` holds them. */
  session: ReportedResultHeader;
  /** The traces' token arrays (coordinator/packed-results.ts); null: `session` holds them. */
  traces: Uint8Array | null;
  policyVersionStarted: number;
  stale: boolean;
  cause: string | null;
  /** Set when nobody will acknowledge it (rollout API tasks): prunable after retention. */
  acked: boolean;
}

/** A group's end, stored in one transaction with what it decided (dynamic sampling, pass rates). */
export interface GroupCompletion {
  groupId: string;
  state: GroupEndStatus;
  rewardStd: number | null;
  flat: boolean;
  replacedBy: string | null;
  replacementExhausted: GroupSamplingRow["replacementExhausted"];
  /** The task's pass-rate estimate as it now is. */
  taskStats: TaskStatsRow | null;
  /** The fresh group started in place of a flat one. */
  replacement: { group: NewGroupRow; members: NewRollout[]; sampling: NewGroupSamplingRow } | null;
}

export class CoordinatorRepo {
  private readonly db: CoordinatorDb;
  private readonly atomic: (statements: Statement[]) => Promise<void>;

  constructor(store: CoordinatorStore) {
    this.db = store.db;
    this.atomic = store.atomic;
  }

  async insertGroup(group: NewGroupRow, members: NewRollout[], sampling?: NewGroupSamplingRow): Promise<void> {
    await this.atomic(this.groupInserts(group, members, sampling));
  }

  private groupInserts(group: NewGroupRow, members: NewRollout[], sampling?: NewGroupSamplingRow): Statement[] {
    const statements: Statement[] = [this.db.insert(groups).values(group)];
    for (let i = 0; i < members.length; i += INSERT_CHUNK) statements.push(this.db.insert(rollouts).values(members.slice(i, i + INSERT_CHUNK)));
    if (sampling) statements.push(this.db.insert(groupSampling).values(sampling));
    return statements;
  }

  /**
   * A group's end with how it was judged, the task's new pass-rate estimate and the group started
   * in its place, all or nothing: a restart never finds a flat group completed without its
   * replacement, nor a pass rate counting a group twice.
   */
  async completeGroup(done: GroupCompletion, now: number): Promise<void> {
    const statements: Statement[] = [
      this.db.update(groups).set({ state: done.state, finishedAt: now }).where(eq(groups.id, done.groupId)),
      // Groups stored before group_sampling existed have no row: the update then changes nothing.
      this.db
        .update(groupSampling)
        .set({ rewardStd: done.rewardStd, flat: done.flat, replacedBy: done.replacedBy, replacementExhausted: done.replacementExhausted })
        .where(eq(groupSampling.groupId, done.groupId)),
    ];
    if (done.taskStats) {
      const { taskId: _id, ...values } = done.taskStats;
      statements.push(this.db.insert(taskStats).values(done.taskStats).onConflictDoUpdate({ target: taskStats.taskId, set: values }));
    }
    if (done.replacement) statements.push(...this.groupInserts(done.replacement.group, done.replacement.members, done.replacement.sampling));
    await this.atomic(statements);
  }

  async groupSampling(groupId: string): Promise<GroupSamplingRow | undefined> {
    const [row] = await this.db.select().from(groupSampling).where(eq(groupSampling.groupId, groupId));
    return row;
  }

  async samplingOfGroups(groupIds: string[]): Promise<GroupSamplingRow[]> {
    const out: GroupSamplingRow[] = [];
    for (let i = 0; i < groupIds.length; i += INSERT_CHUNK)
      out.push(
        ...(await this.db
          .select()
          .from(groupSampling)
          .where(inArray(groupSampling.groupId, groupIds.slice(i, i + INSERT_CHUNK)))),
      );
    return out;
  }

  async loadTaskStats(): Promise<TaskStatsRow[]> {
    return this.db.select().from(taskStats);
  }

  /** One UPDATE per (node, attempt, version): a dispatch round of thousands is a handful of statements. */
  async assign(batch: Assigned[], now: number): Promise<void> {
    const byKey = new Map<string, { a: Assigned; ids: string[] }>();
    for (const a of batch) {
      const key = `${a.nodeId}\u0000${a.attempt}\u0000${a.policyVersion}`;
      (byKey.get(key) ?? byKey.set(key, { a, ids: [] }).get(key)!).ids.push(a.rolloutId);
    }
    const statements: Statement[] = [];
    for (const { a, ids } of byKey.values()) {
      for (let i = 0; i < ids.length; i += INSERT_CHUNK) {
        statements.push(
          this.db
            .update(rollouts)
            .set({ state: "ASSIGNED", nodeId: a.nodeId, attempt: a.attempt, policyVersionStarted: a.policyVersion, assignedAt: now })
            .where(inArray(rollouts.id, ids.slice(i, i + INSERT_CHUNK))),
        );
      }
    }
    await this.atomic(statements);
  }

  /** Back to the queue (node lost, staleness); the attempt count stays, the next assign raises it. */
  async requeue(ids: string[], cause: string): Promise<void> {
    for (let i = 0; i < ids.length; i += INSERT_CHUNK) {
      await this.db
        .update(rollouts)
        .set({ state: "QUEUED", nodeId: null, cause })
        .where(inArray(rollouts.id, ids.slice(i, i + INSERT_CHUNK)));
    }
  }

  /** Terminal without a result (cancelled while queued, or its group deleted). */
  async finishWithoutResult(ids: string[], state: TerminalRolloutState, cause: string, now: number): Promise<void> {
    for (let i = 0; i < ids.length; i += INSERT_CHUNK) {
      await this.db
        .update(rollouts)
        .set({ state, cause, finishedAt: now })
        .where(inArray(rollouts.id, ids.slice(i, i + INSERT_CHUNK)));
    }
  }

  /** Stores results and finishes their rollouts in one transaction (group commit). */
  async saveResults(batch: StoredResult[], now: number): Promise<void> {
    const statements: Statement[] = [];
    for (let i = 0; i < batch.length; i += INSERT_CHUNK) {
      statements.push(
        this.db.insert(results).values(
          batch.slice(i, i + INSERT_CHUNK).map((r) => ({
            rolloutId: r.rolloutId,
            groupId: r.groupId,
            trainerId: r.trainerId,
            status: r.status,
            reward: r.reward,
            session: r.session,
            policyVersionStarted: r.policyVersionStarted,
            stale: r.stale,
            createdAt: now,
            ackedAt: r.acked ? now : null,
          })),
        ),
      );
    }
    const blobs = batch
      .filter((r) => r.traces !== null)
      .map((r) => ({ rolloutId: r.rolloutId, traces: Buffer.from(r.traces!.buffer, r.traces!.byteOffset, r.traces!.byteLength) }));
    for (let i = 0; i < blobs.length; i += INSERT_CHUNK) statements.push(this.db.insert(resultTraces).values(blobs.slice(i, i + INSERT_CHUNK)));
    // One UPDATE per (state, cause): a batch of hundreds finishing alike is one statement.
    const byEnd = new Map<string, { state: TerminalRolloutState; cause: string | null; ids: string[] }>();
    for (const r of batch) {
      const key = `${r.status}\u0000${r.cause ?? "\u0001"}`;
      (byEnd.get(key) ?? byEnd.set(key, { state: r.status, cause: r.cause, ids: [] }).get(key)!).ids.push(r.rolloutId);
    }
    for (const { state, cause, ids } of byEnd.values()) {
      for (let i = 0; i < ids.length; i += INSERT_CHUNK)
        statements.push(
          this.db
            .update(rollouts)
            .set({ state, cause, finishedAt: now })
            .where(inArray(rollouts.id, ids.slice(i, i + INSERT_CHUNK))),
        );
    }
    await this.atomic(statements);
  }

  /** Acknowledgements of several frames in one transaction. */
  async ack(entries: { trainerId: string; ids: string[] }[], now: number): Promise<void> {
    const statements: Statement[] = [];
    for (const { trainerId, ids } of entries) {
      for (let i = 0; i < ids.length; i += INSERT_CHUNK) {
        statements.push(
          this.db
            .update(results)
            .set({ ackedAt: now })
            .where(and(eq(results.trainerId, trainerId), isNull(results.ackedAt), inArray(results.rolloutId, ids.slice(i, i + INSERT_CHUNK)))),
        );
      }
    }
    await this.atomic(statements);
  }

  /** Unacknowledged result ids of a trainer, oldest first. */
  async unackedIds(trainerId: string): Promise<string[]> {
    const rows = await this.db
      .select({ id: results.rolloutId })
      .from(results)
      .where(and(eq(results.trainerId, trainerId), isNull(results.ackedAt)))
      .orderBy(asc(results.createdAt));
    return rows.map((r) => r.id);
  }

  /** Finished groups of a trainer that still owe it results (their `group` message is owed too). */
  async finishedGroupsWithUnacked(trainerId: string): Promise<string[]> {
    const rows = await this.db
      .selectDistinct({ id: results.groupId })
      .from(results)
      .innerJoin(groups, eq(groups.id, results.groupId))
      .where(and(eq(results.trainerId, trainerId), isNull(results.ackedAt), isNotNull(groups.finishedAt)));
    return rows.map((r) => r.id);
  }

  /** Results with their trace blobs. */
  async resultsById(ids: string[]): Promise<ResultWithTraces[]> {
    const out: ResultWithTraces[] = [];
    for (let i = 0; i < ids.length; i += INSERT_CHUNK) out.push(...(await this.withTraces().where(inArray(results.rolloutId, ids.slice(i, i + INSERT_CHUNK)))));
    return out;
  }

  /** A group's results with their trace blobs (whole sessions: the rollout API, the dashboard). */
  async groupResultsWithTraces(groupId: string): Promise<ResultWithTraces[]> {
    return this.withTraces().where(eq(results.groupId, groupId)).orderBy(asc(results.createdAt));
  }

  private withTraces() {
    return this.db
      .select({ ...getTableColumns(results), traces: resultTraces.traces })
      .from(results)
      .leftJoin(resultTraces, eq(resultTraces.rolloutId, results.rolloutId));
  }

  async groupResults(groupId: string): Promise<ResultRow[]> {
    return this.db.select().from(results).where(eq(results.groupId, groupId)).orderBy(asc(results.createdAt));
  }

  async setGroupState(id: string, state: (typeof GROUP_STATES)[number], now: number | null): Promise<void> {
    await this.db.update(groups).set({ state, finishedAt: now }).where(eq(groups.id, id));
  }

  async deleteGroup(id: string): Promise<void> {
    await this.db.delete(groups).where(eq(groups.id, id));
  }

  /** What a restarted coordinator resumes: unfinished groups and their non-terminal rollouts. */
  async loadActive(): Promise<{ groups: GroupRow[]; rollouts: RolloutRow[] }> {
    const active = await this.db.select().from(groups).where(eq(groups.state, "running"));
    const open = await this.db
      .select()
      .from(rollouts)
      .where(notInArray(rollouts.state, [...TERMINAL_ROLLOUT_STATES]))
      .orderBy(asc(rollouts.seq));
    return { groups: active, rollouts: open };
  }

  /** Terminal rollouts of the active groups, with their result's status and reward (early stop, completion, flatness). */
  async finishedOfGroups(groupIds: string[]): Promise<FinishedRollout[]> {
    const out: FinishedRollout[] = [];
    for (let i = 0; i < groupIds.length; i += INSERT_CHUNK) {
      const rows = await this.db
        .select({ id: rollouts.id, groupId: rollouts.groupId, state: rollouts.state, status: results.status, reward: results.reward })
        .from(rollouts)
        .leftJoin(results, eq(results.rolloutId, rollouts.id))
        .where(and(inArray(rollouts.groupId, groupIds.slice(i, i + INSERT_CHUNK)), inArray(rollouts.state, [...TERMINAL_ROLLOUT_STATES])));
      for (const row of rows) if (isTerminalRolloutState(row.state)) out.push({ ...row, state: row.state });
    }
    return out;
  }

  async maxSeq(): Promise<number> {
    const [row] = await this.db.select({ max: sql<number | null>`max(${rollouts.seq})` }).from(rollouts);
    return row?.max ?? 0;
  }

  async findGroup(id: string): Promise<GroupRow | undefined> {
    const [row] = await this.db.select().from(groups).where(eq(groups.id, id));
    return row;
  }

  /** The latest rollout-API group (no trainer) of a task id; trainer-stream groups are never returned. */
  async findGroupByTaskId(taskId: string): Promise<GroupRow | undefined> {
    const [row] = await this.db
      .select()
      .from(groups)
      .where(and(eq(groups.taskId, taskId), isNull(groups.trainerId)))
      .orderBy(sql`${groups.createdAt} desc`)
      .limit(1);
    return row;
  }

  async listGroups(limit: number): Promise<GroupRow[]> {
    return this.db
      .select()
      .from(groups)
      .orderBy(sql`${groups.createdAt} desc`)
      .limit(limit);
  }

  async listRollouts(state: RolloutStateName | undefined, limit: number): Promise<RolloutRow[]> {
    const query = this.db.select().from(rollouts);
    return (state ? query.where(eq(rollouts.state, state)) : query).orderBy(asc(rollouts.seq)).limit(limit);
  }

  async groupRollouts(groupId: string): Promise<RolloutRow[]> {
    return this.db.select().from(rollouts).where(eq(rollouts.groupId, groupId)).orderBy(asc(rollouts.idx));
  }

  async countRolloutsByState(): Promise<Record<string, number>> {
    const rows = await this.db
      .select({ state: rollouts.state, n: sql<number>`count(*)` })
      .from(rollouts)
      .groupBy(rollouts.state);
    return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
  }

  /** Drops acknowledged results older than the retention, and finished groups all of whose results are gone. */
  async prune(olderThan: number): Promise<number> {
    const gone = await this.db
      .delete(results)
      .where(and(isNotNull(results.ackedAt), lt(results.ackedAt, olderThan)))
      .returning({ id: results.rolloutId });
    await this.db
      .delete(groups)
      .where(
        and(isNotNull(groups.finishedAt), lt(groups.finishedAt, olderThan), sql`not exists (select 1 from ${results} where ${results.groupId} = ${groups.id})`),
      );
    return gone.length;
  }

  async getMeta(key: string): Promise<string | undefined> {
    const [row] = await this.db.select().from(meta).where(eq(meta.key, key));
    return row?.value;
  }

  async setMeta(key: string, value: string): Promise<void> {
    await this.db.insert(meta).values({ key, value }).onConflictDoUpdate({ target: meta.key, set: { value } });
  }

  async deleteMeta(key: string): Promise<void> {
    await this.db.delete(meta).where(eq(meta.key, key));
  }
}
