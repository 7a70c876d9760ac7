// Why: the node's durable record of gateway sessions and every LLM call they made; drizzle
// tables here are the single source for the committed migrations in migrations/node/.
import { blob, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { SESSION_RESULT_STATUSES, TASK_STATUSES, type SessionResult, type TaskRequest } from "../../protocol/rollout.ts";
import { ROLLOUT_STATES } from "../pipeline/states.ts";

export const sessions = sqliteTable("sessions", {
  id: text("id").primaryKey(),
  /** SHA-256 of the session token: the token itself is shown once, at creation. */
  tokenHash: text("token_hash").notNull().unique(),
  metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  createdAt: text("created_at").notNull(),
  closedAt: text("closed_at"),
});

export const calls = sqliteTable(
  "calls",
  {
    sessionId: text("session_id")
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    seq: integer("seq").notNull(),
    dialect: text("dialect").notNull(),
    /** The pivot request with `messages` holding only what follows `messagesBaseLen` messages of call `messagesBaseSeq`. */
    request: text("request", { mode: "json" }).notNull(),
    messagesBaseSeq: integer("messages_base_seq"),
    messagesBaseLen: integer("messages_base_len").notNull().default(0),
    /** Set when the request's tools equal call `toolsBaseSeq`'s (harnesses send 3–40 KB of tools every turn); `request.tools` is then stored empty. */
    toolsBaseSeq: integer("tools_base_seq"),
    response: text("response", { mode: "json" }),
    /**
     * Prompt ids are stored as a reference to an earlier call's tokens (its prompt followed by
     * its output) plus the new suffix, so a session's storage grows with its unique tokens.
     */
    promptBaseSeq: integer("prompt_base_seq"),
    promptBaseLen: integer("prompt_base_len").notNull().default(0),
    promptSuffix: blob("prompt_suffix", { mode: "buffer" }),
    outputIds: blob("output_ids", { mode: "buffer" }),
    logprobs: blob("logprobs", { mode: "buffer" }),
    engineUrl: text("engine_url"),
    policyVersion: integer("policy_version").notNull(),
    queuedMs: real("queued_ms").notNull(),
    engineMs: real("engine_ms").notNull(),
    totalMs: real("total_ms").notNull(),
    error: text("error", { mode: "json" }),
    notes: text("notes", { mode: "json" }),
    startedAt: text("started_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.seq] })],
);

/** A task submitted to this node (Polar's TaskRequest), kept so its status survives a restart. */
export const rolloutTasks = sqliteTable("rollout_tasks", {
  taskId: text("task_id").primaryKey(),
  /** The parsed TaskRequest. */
  request: text("request", { mode: "json" }).$type<TaskRequest>().notNull(),
  status: text("status", { enum: TASK_STATUSES }).notNull(),
  createdAt: text("created_at").notNull(),
  finishedAt: text("finished_at"),
  /** Set once the TaskResult reached its callback_url (or gave up). */
  callbackDoneAt: text("callback_done_at"),
});

/** One rollout (one session of a task) and the state it is in now. */
export const rollouts = sqliteTable("rollouts", {
  id: text("id").primaryKey(),
  taskId: text("task_id")
    .notNull()
    .references(() => rolloutTasks.taskId, { onDelete: "cascade" }),
  sampleIndex: integer("sample_index").notNull(),
  state: text("state", { enum: ROLLOUT_STATES }).notNull(),
  priority: integer("priority").notNull(),
  /** The gateway session that recorded its calls, once RUN opened one. */
  gatewaySessionId: text("gateway_session_id"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

/** Every state change of a rollout, with its time. */
export const rolloutEvents = sqliteTable(
  "rollout_events",
  {
    rolloutId: text("rollout_id")
      .notNull()
      .references(() => rollouts.id, { onDelete: "cascade" }),
    seq: integer("seq").notNull(),
    fromState: text("from_state"),
    toState: text("to_state").notNull(),
    at: text("at").notNull(),
    detail: text("detail", { mode: "json" }).$type<Record<string, unknown>>(),
  },
  (t) => [primaryKey({ columns: [t.rolloutId, t.seq] })],
);

/** A rollout's SessionResult, written before it is reported. */
export const rolloutResults = sqliteTable("rollout_results", {
  rolloutId: text("rollout_id")
    .primaryKey()
    .references(() => rollouts.id, { onDelete: "cascade" }),
  taskId: text("task_id").notNull(),
  status: text("status", { enum: SESSION_RESULT_STATUSES }).notNull(),
  result: text("result", { mode: "json" }).$type<SessionResult>().notNull(),
  createdAt: text("created_at").notNull(),
});

/**
 * Rollouts a coordinator assigned to this node: which attempt, and whether the coordinator has
 * acknowledged the result (until then it is sent again after every reconnect).
 */
export const coordinatorAssignments = sqliteTable("coordinator_assignments", {
  /** The node's own rollout (one per attempt, so a reassignment never collides with an old run). */
  rolloutId: text("rollout_id")
    .primaryKey()
    .references(() => rollouts.id, { onDelete: "cascade" }),
  coordinatorRolloutId: text("coordinator_rollout_id").notNull(),
  attempt: integer("attempt").notNull(),
  groupId: text("group_id").notNull(),
  /** The task id the coordinator gave (the node stores the rollout under a task of its own). */
  taskId: text("task_id").notNull(),
  ackedAt: text("acked_at"),
});
