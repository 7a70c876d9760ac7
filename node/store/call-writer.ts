// Why: the insert of a recorded call runs once per LLM call, before the answer leaves. Through
// drizzle's query builder it would build the SQL, map the row and prepare a new statement every
// time (several times SQLite's own work, and a statement per call holding its bound ~100 KB until
// the GC finalizes it). This prepares the insert once on the store's connection and binds values
// with the schema's own column encoders, so the SQL and the stored bytes stay drizzle's; calls
// finishing together share one commit.
import type { Statement as PreparedStatement, SQLQueryBindings } from "bun:sqlite";
import { getTableColumns, Param, Placeholder, sql } from "drizzle-orm";
import type { NodeDb } from "./db.ts";
import { calls } from "./schema.ts";

export type CallInsert = typeof calls.$inferInsert;

/** Inserts one call row; resolves once it is committed. */
export type CallWriter = (row: CallInsert) => Promise<void>;

/** The schema's insert with every column a named placeholder: its SQL and, per `?`, the column and how to encode it. */
function insertTemplate(db: NodeDb): { text: string; bind: Array<(row: CallInsert) => SQLQueryBindings> } {
  const columns = Object.keys(getTableColumns(calls)) as Array<keyof CallInsert>;
  const placeholders: Record<string, unknown> = Object.fromEntries(columns.map((c) => [c, sql.placeholder(c)]));
  const query = db
    .insert(calls)
    .values(placeholders as CallInsert)
    .toSQL();
  const bind = query.params.map((p) => {
    if (!(p instanceof Param) || !(p.value instanceof Placeholder)) throw new Error("unexpected parameter in the calls insert");
    const name = p.value.name as keyof CallInsert;
    const encoder = p.encoder;
    return (row: CallInsert) => {
      const value = row[name];
      return value === null || value === undefined ? null : (encoder.mapToDriverValue(value) as SQLQueryBindings);
    };
  });
  return { text: query.sql, bind };
}

interface Pending {
  args: SQLQueryBindings[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * The insert prepared once on the store's bun:sqlite connection. Rows that arrive in the same
 * turn of the event loop (concurrent sessions' calls finishing together) are committed in one
 * transaction, each promise resolving once it is committed: one WAL commit per batch instead of
 * per call. A row that fails (a deleted session's foreign key) fails alone — SQLite undoes only
 * that statement — with bun:sqlite's SQLiteError. The batch runs synchronously, so no other
 * statement on the connection ever runs inside its transaction.
 */
export function callWriter(db: NodeDb): CallWriter {
  const connection = db.$client;
  const { text, bind } = insertTemplate(db);
  const insert: PreparedStatement = connection.prepare(text);
  const begin = connection.prepare("BEGIN IMMEDIATE");
  const commit = connection.prepare("COMMIT");
  let pending: Pending[] = [];

  const runOne = (args: SQLQueryBindings[]): unknown => {
    try {
      insert.run(...args);
      return undefined;
    } catch (err) {
      return err;
    }
  };

  const flush = () => {
    const batch = pending;
    pending = [];
    if (batch.length === 1) {
      const failure = runOne(batch[0]!.args);
      return failure === undefined ? batch[0]!.resolve() : batch[0]!.reject(failure);
    }
    let failures: unknown[];
    try {
      begin.run();
      failures = batch.map((p) => runOne(p.args));
      commit.run();
    } catch (err) {
      if (connection.inTransaction) connection.run("ROLLBACK");
      for (const p of batch) p.reject(err);
      return;
    }
    batch.forEach((p, i) => (failures[i] === undefined ? p.resolve() : p.reject(failures[i])));
  };

  return (row) =>
    new Promise<void>((resolve, reject) => {
      pending.push({ args: bind.map((b) => b(row)), resolve, reject });
      if (pending.length === 1) setImmediate(flush);
    });
}
