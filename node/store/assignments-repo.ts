// Why: what a node owes its coordinator survives restarts: every assigned rollout and whether
// its result was acknowledged; unacknowledged results are sent again after each reconnect.
import { eq, isNull } from "drizzle-orm";
import type { SessionResult } from "../../protocol/rollout.ts";
import type { RolloutState } from "../pipeline/states.ts";
import type { NodeDb } from "./db.ts";
import { coordinatorAssignments, rolloutResults, rollouts } from "./schema.ts";

export type AssignmentRow = typeof coordinatorAssignments.$inferSelect;

export interface OwedAssignment extends AssignmentRow {
  /** The node-side state of the rollout. */
  state: RolloutState;
  /** Its stored SessionResult, once it has one. */
  result: SessionResult | null;
}

export class AssignmentsRepo {
  constructor(private readonly db: NodeDb) {}

  async insert(row: Omit<AssignmentRow, "ackedAt">): Promise<void> {
    await this.db.insert(coordinatorAssignments).values({ ...row, ackedAt: null });
  }

  async find(rolloutId: string): Promise<AssignmentRow | undefined> {
    const [row] = await this.db.select().from(coordinatorAssignments).where(eq(coordinatorAssignments.rolloutId, rolloutId));
    return row;
  }

  /** Assignments not yet acknowledged, with their rollout's state and result. */
  async owed(): Promise<OwedAssignment[]> {
    const rows = await this.db
      .select({ a: coordinatorAssignments, state: rollouts.state, result: rolloutResults.result })
      .from(coordinatorAssignments)
      .innerJoin(rollouts, eq(rollouts.id, coordinatorAssignments.rolloutId))
      .leftJoin(rolloutResults, eq(rolloutResults.rolloutId, coordinatorAssignments.rolloutId))
      .where(isNull(coordinatorAssignments.ackedAt));
    return rows.map((r) => ({ ...r.a, state: r.state, result: r.result ?? null }));
  }

  async acknowledge(coordinatorRolloutId: string, attempt: number): Promise<void> {
    const rows = await this.db.select().from(coordinatorAssignments).where(eq(coordinatorAssignments.coordinatorRolloutId, coordinatorRolloutId));
    for (const row of rows) {
      if (row.attempt === attempt)
        await this.db.update(coordinatorAssignments).set({ ackedAt: new Date().toISOString() }).where(eq(coordinatorAssignments.rolloutId, row.rolloutId));
    }
  }
}
