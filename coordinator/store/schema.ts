// Why: the coordinator's durable record — groups, their rollouts, and finished results until
// the trainer acknowledged them; these drizzle tables are the source of migrations/coordinator/.
import { blob, index, integer, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { ReportedResultHeader } from "../../protocol/node-link.ts";
import { ROLLOUT_RESULT_STATUSES, type TaskRequest } from "../../protocol/rollout.ts";
import { ADVANTAGE_MODES, GROUP_END_STATUSES, REPLACEMENT_EXHAUSTED_REASONS, type ReplaceFlat } from "../../protocol/trainer-stream.ts";
import type { RequestOverlay } from "../groups.ts";
import { ROLLOUT_STATES } from "../rollout-states.ts";

/** A group runs until it ends (Polar's task status words). */
export const GROUP_STATES = ["running", ...GROUP_END_STATUSES] as const;

export const groups = sqliteTable(
  "groups",
  {
    id: text("id").primaryKey(),
    /** The trainer whose stream receives the results; null for Polar rollout API tasks. */
    trainerId: text("trainer_id"),
    /** Polar's task_id (the rollout API addresses groups by it). */
    taskId: text("task_id").notNull(),
    /** The TaskRequest every rollout of the group runs (num_samples 1). */
    request: text("request", { mode: "json" }).$type<TaskRequest>().notNull(),
    n: integer("n").notNull(),
    earlyStopMinUsable: integer("early_stop_min_usable"),
    advantages: text("advantages", { enum: ADVANTAGE_MODES }).notNull(),
    callbackUrl: text("callback_url"),
    state: text("state", { enum: GROUP_STATES }).notNull(),
    createdAt: integer("created_at").notNull(),
    finishedAt: integer("finished_at"),
  },
  (t) => [index("groups_task_id").on(t.taskId), index("groups_state").on(t.state)],
);

export const rollouts = sqliteTable(
  "rollouts",
  {
    id: text("id").primaryKey(),
    groupId: text("group_id")
      .notNull()
      .references(() => groups.id, { onDelete: "cascade" }),
    idx: integer("idx").notNull(),
    /** Submission order: FIFO within a priority. */
    seq: integer("seq").notNull(),
    state: text("state", { enum: ROLLOUT_STATES }).notNull(),
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
  },
  (t) => [index("rollouts_state").on(t.state), index("rollouts_group").on(t.groupId)],
);

export const results = sqliteTable(
  "results",
  {
    rolloutId: text("rollout_id")
      .primaryKey()
      .references(() => rollouts.id, { onDelete: "cascade" }),
    groupId: text("group_id").notNull(),
    trainerId: text("trainer_id"),
    /** Always the rollout's terminal state. */
    status: text("status", { enum: ROLLOUT_RESULT_STATUSES }).notNull(),
    reward: real("reward"),
    /** The node's SessionResult as reported and parsed (the streamed result is built from it and the columns here). */
    session: text("session", { mode: "json" }).$type<ReportedResultHeader>().notNull(),
    policyVersionStarted: integer("policy_version_started").notNull(),
    stale: integer("stale", { mode: "boolean" }).notNull(),
    createdAt: integer("created_at").notNull(),
    ackedAt: integer("acked_at"),
  },
  (t) => [index("results_unacked").on(t.trainerId, t.ackedAt)],
);

/**
 * A result's token arrays as a trace blob (protocol/trace-frame.ts), stored and streamed as they
 * came; its `results.session` traces then hold every other field. No row for results written
 * before blobs and for one whose arrays a blob cannot carry exactly: `session` holds everything.
 * A table of its own so that acknowledging a result (an UPDATE of `results`) never rewrites it.
 */
export const resultTraces = sqliteTable("result_traces", {
  rolloutId: text("rollout_id")
    .primaryKey()
    .references(() => results.rolloutId, { onDelete: "cascade" }),
  traces: blob("traces", { mode: "buffer" }).$type<Buffer>().notNull(),
});

/** Small durable facts (the policy version) that outlive a restart. */
export const meta = sqliteTable("meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

/**
 * Dynamic sampling of a group (one row per group, written with it): what its submit asked of a
 * flat group, where it sits in a chain of replacements, and — once it completed — how it was
 * judged and what was done. A group without a row (written before this table) has the defaults.
 */
export const groupSampling = sqliteTable("group_sampling", {
  groupId: text("group_id")
    .primaryKey()
    .references(() => groups.id, { onDelete: "cascade" }),
  minRewardStd: real("min_reward_std"),
  /** The submit's replace_flat (ReplaceFlat), inherited by its replacements. */
  replaceFlat: text("replace_flat", { mode: "json" }).$type<ReplaceFlat>(),
  /** The submit's agent, builder, priority and metadata: a `next_task` replacement runs them over another task. */
  overlay: text("overlay", { mode: "json" }).$type<RequestOverlay>(),
  /** The submitted group this chain of replacements started from (itself for a submitted group). */
  rootGroupId: text("root_group_id").notNull(),
  replaces: text("replaces"),
  replacementIndex: integer("replacement_index").notNull().default(0),
  rewardStd: real("reward_std"),
  flat: integer("flat", { mode: "boolean" }),
  replacedBy: text("replaced_by"),
  /** Why a flat group that asked for a replacement got none. */
  replacementExhausted: text("replacement_exhausted", { enum: REPLACEMENT_EXHAUSTED_REASONS }),
});

/** Per-task pass-rate estimate (coordinator/task-stats.ts): decayed sums, updated as groups complete. */
export const taskStats = sqliteTable("task_stats", {
  taskId: text("task_id").primaryKey(),
  /** Decayed count of scored rollouts, of passes (reward ≥ 1) and sum of rewards. */
  weight: real("weight").notNull(),
  passSum: real("pass_sum").notNull(),
  rewardSum: real("reward_sum").notNull(),
  groups: integer("groups").notNull(),
  rollouts: integer("rollouts").notNull(),
  flatGroups: integer("flat_groups").notNull(),
  updatedAt: integer("updated_at").notNull(),
});
