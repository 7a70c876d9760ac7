// Why: the coordinator's durable record — groups, their rollouts, and finished results until
// the trainer acknowledged them; these drizzle tables are the source of migrations/coordinator/.
import { index, integer, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const groups = sqliteTable("groups", {
  id: text("id").primaryKey(),
  /** The trainer whose stream receives the results; null for Polar rollout API tasks. */
  trainerId: text("trainer_id"),
  /** Polar's task_id (the rollout API addresses groups by it). */
  taskId: text("task_id").notNull(),
  /** The TaskRequest every rollout of the group runs (num_samples 1). */
  request: text("request", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  n: integer("n").notNull(),
  earlyStopMinUsable: integer("early_stop_min_usable"),
  advantages: text("advantages").notNull(),
  callbackUrl: text("callback_url"),
  state: text("state").notNull(),
  createdAt: integer("created_at").notNull(),
  finishedAt: integer("finished_at"),
}, (t) => [index("groups_task_id").on(t.taskId), index("groups_state").on(t.state)]);

export const rollouts = sqliteTable("rollouts", {
  id: text("id").primaryKey(),
  groupId: text("group_id").notNull().references(() => groups.id, { onDelete: "cascade" }),
  idx: integer("idx").notNull(),
  /** Submission order: FIFO within a priority. */
  seq: integer("seq").notNull(),
  state: text("state").notNull(),
  priority: integer("priority").notNull(),
  image: text("image").notNull(),
  nodeId: text("node_id"),
  /** Assignments so far; a result is accepted only for the current one. */
  attempt: integer("attempt").notNull().default(0),
  policyVersionStarted: integer("policy_version_started"),
  cause: text("cause"),
  createdAt: integer("created_at").notNull(),
  assignedAt: integer("assigned_at"),
  finishedAt: integer("finished_at"),
}, (t) => [index("rollouts_state").on(t.state), index("rollouts_group").on(t.groupId)]);

export const results = sqliteTable("results", {
  rolloutId: text("rollout_id").primaryKey().references(() => rollouts.id, { onDelete: "cascade" }),
  groupId: text("group_id").notNull(),
  trainerId: text("trainer_id"),
  status: text("status").notNull(),
  reward: real("reward"),
  /** The node's SessionResult as reported (the streamed result is built from it and the columns here). */
  session: text("session", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  policyVersionStarted: integer("policy_version_started").notNull(),
  stale: integer("stale", { mode: "boolean" }).notNull(),
  createdAt: integer("created_at").notNull(),
  ackedAt: integer("acked_at"),
}, (t) => [index("results_unacked").on(t.trainerId, t.ackedAt)]);

/** Small durable facts (the policy version) that outlive a restart. */
export const meta = sqliteTable("meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});
