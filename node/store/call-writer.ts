// Why: the insert of a recorded call runs once per LLM call, before the answer leaves. Through
// drizzle and @libsql/client it cost ~0.3 ms of CPU per call (the client re-prepares the statement
// and probes it by catching an exception every time; drizzle re-maps the row), several times
// SQLite's own work. This prepares the insert once on a connection of the store's own and binds
// values with the schema's own column encoders, so the SQL and the stored bytes stay drizzle's;
// calls finishing together share one commit.
import { LibsqlError } from "@libsql/client";
import { getTableColumns, Param, Placeholder, sql } from "drizzle-orm";
import Database from "libsql";
import type { NodeDb } from "./db.ts";
import { calls } from "./schema.ts";

export type CallInsert = typeof calls.$inferInsert;

/** Inserts one call row; resolves once it is committed. */
export type CallWriter = (row: CallInsert) => Promise<void>;

/** The schema's insert with every column a named placeholder: its SQL and, per `?`, the column and how to encode it. */
function insertTemplate(db: NodeDb): { text: string; bind: Array<(row: CallInsert) => unknown> } {
  const columns = Object.keys(getTableColumns(calls)) as Array<keyof CallInsert>;
  const query = db
    .insert(calls)
    .values(Object.fromEntries(columns.map((c) => [c, sql.placeholder(c)])) as unknown as CallInsert)
    .toSQL();
  const bind = query.params.map((p) => {
    if (!(p instanceof Param) || !(p.value instanceof Placeholder)) throw new Error("unexpected parameter in the calls insert");
    const name = p.value.name as keyof CallInsert;
    const encoder = p.encoder;
    return (row: CallInsert) => {
      const value = row[name];
      return value === null || value === undefined ? null : encoder.mapToDriverValue(value);
    };
  });
  return { text: query.sql, bind };
}

/** Drizzle's prepared insert: for stores without a file of their own (`:memory:`). */
export function drizzleCallWriter(db: NodeDb): CallWriter {
  const columns = Object.keys(getTableColumns(calls)) as Array<keyof CallInsert>;
  const statement = db
    .insert(calls)
    .values(Object.fromEntries(columns.map((c) => [c, sql.placeholder(c)])) as unknown as CallInsert)
    .prepare();
  return async (row) => {
    await statement.execute(row);
  };
}

interface Pending {
  args: unknown[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * The insert prepared once on `connection` (a libsql connection to the store's file, with the
 * store's pragmas). Rows that arrive in the same turn of the event loop (concurrent sessions'
 * calls finishing together) are committed in one transaction, each promise resolving once it is
 * committed: one WAL commit per batch instead of per call. A row that fails (a deleted session's
 * foreign key) fails alone — SQLite undoes only that statement — with the LibsqlError
 * @libsql/client would have thrown. The batch runs synchronously, so no other statement on the
 * store ever waits for this connection's transaction.
 */
export function nativeCallWriter(db: NodeDb, connection: Database.Database): CallWriter {
  const { text, bind } = insertTemplate(db);
  const insert = connection.prepare(text);
  const begin = connection.prepare("BEGIN IMMEDIATE");
  const commit = connection.prepare("COMMIT");
  let pending: Pending[] = [];

  const runOne = (args: unknown[]): unknown => {
    try {
      insert.run(args);
      return undefined;
    } catch (err) {
      return asLibsqlError(err);
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
      if (connection.inTransaction) connection.exec("ROLLBACK");
      for (const p of batch) p.reject(asLibsqlError(err));
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

/** A libsql error as @libsql/client reports it: the base code (SQLITE_CONSTRAINT), then the extended one. */
function asLibsqlError(err: unknown): unknown {
  if (!(err instanceof Database.SqliteError)) return err;
  const baseCode = err.code.split("_").slice(0, 2).join("_");
  return new LibsqlError(err.message, baseCode, err.code, (err as { rawCode?: number }).rawCode, err);
}
