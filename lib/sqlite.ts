// Why: the node and the coordinator both keep their state in SQLite through drizzle; this is the
// one layer that opens a SQLite file (or `:memory:`) for either — bun:sqlite under drizzle's
// bun-sqlite driver, the durability pragmas, the schema-version check and the committed
// migrations — and runs a list of statements atomically. Files are never opened with
// @libsql/client: its native memory grows with the bytes written and is not given back
// (bench/libsql-memory.ts, bench/RESULTS.md); lib/sqlite-libsql.ts serves libSQL server URLs.
import { Database, type SQLQueryBindings } from "bun:sqlite";
import type { BatchItem } from "drizzle-orm/batch";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { migrate } from "drizzle-orm/bun-sqlite/migrator";
import type { Query } from "drizzle-orm/sql";
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { assertStoredVersionKnown, MIGRATIONS_TABLE_EXISTS, STORED_VERSION, type StoredVersion } from "./sqlite-schema-version.ts";

/** An insert, update or delete built on a drizzle database, not yet run. */
export type Statement = BatchItem<"sqlite"> & { toSQL(): Query };

/** What a service's store is: its name in errors, its drizzle schema and its committed migrations. */
export interface StoreSpec<TSchema extends Record<string, unknown>> {
  /** "node store", "coordinator store": how errors name it. */
  label: string;
  schema: TSchema;
  migrationsFolder: string;
}

/** A statement waits up to 5 s for another connection's lock (set before anything reads the file). */
export const BUSY_TIMEOUT = "PRAGMA busy_timeout = 5000";
/**
 * WAL + NORMAL: a committed row survives a crash of the process (journal_mode is written into the
 * file, so these run only once the schema version is known to be this code's or older).
 */
export const FILE_PRAGMAS = ["PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL"];
/** Foreign keys cascade deletes (SQLite leaves them off on every new connection). */
export const CONNECTION_PRAGMAS = ["PRAGMA foreign_keys = ON"];

export type SqliteDb<TSchema extends Record<string, unknown>> = BunSQLiteDatabase<TSchema> & { $client: Database };

export interface SqliteFile<TSchema extends Record<string, unknown>> {
  db: SqliteDb<TSchema>;
  /** Runs the statements in one transaction: all of them or none. */
  atomic(statements: readonly Statement[]): Promise<void>;
  close(): void;
}

/** Opens (creating it and its folder if needed) the SQLite file at `location`, or `:memory:`, and migrates it. */
export function openSqliteFile<TSchema extends Record<string, unknown>>(location: string, spec: StoreSpec<TSchema>): SqliteFile<TSchema> {
  const memory = location === ":memory:";
  if (!memory) mkdirSync(dirname(resolve(location)), { recursive: true });
  const client = new Database(memory ? location : resolve(location), { create: true });
  try {
    client.run(BUSY_TIMEOUT);
    assertStoredVersionKnown(spec, location, storedVersion(client));
    for (const pragma of [...FILE_PRAGMAS, ...CONNECTION_PRAGMAS]) client.run(pragma);
    const db = drizzle(client, { schema: spec.schema });
    migrate(db, { migrationsFolder: spec.migrationsFolder });
    return { db, atomic: async (statements) => runAtomically(client, statements), close: () => client.close() };
  } catch (err) {
    client.close();
    throw err;
  }
}

function storedVersion(client: Database): StoredVersion | null {
  if (!client.query(MIGRATIONS_TABLE_EXISTS).get()) return null;
  const row = client.query(STORED_VERSION).get() as { applied: number; newest: number | string | null };
  return { applied: row.applied, newestMillis: row.newest === null ? null : Number(row.newest) };
}

/**
 * bun:sqlite is synchronous: the transaction runs to its end before anything else runs on the
 * connection. Each statement is finalized as soon as it ran: a bun:sqlite statement keeps a copy
 * of its bound values until it is finalized or garbage-collected, and its small wrapper gives the
 * GC no reason to hurry (drizzle's own run() never finalizes) — with results' traces bound, that
 * was ~25 MB per 500-row insert held until some later collection.
 */
export function runAtomically(client: Database, statements: readonly Statement[]): void {
  client.transaction(() => {
    for (const statement of statements) {
      const { sql, params } = statement.toSQL();
      const prepared = client.prepare(sql);
      try {
        prepared.run(...(params as SQLQueryBindings[]));
      } finally {
        prepared.finalize();
      }
    }
  })();
}
