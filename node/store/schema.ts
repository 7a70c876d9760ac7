// Why: the node's durable record of gateway sessions and every LLM call they made; drizzle
// tables here are the single source for the committed migrations in migrations/node/.
import { blob, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

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
