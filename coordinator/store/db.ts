// Why: opens the coordinator's database and applies the committed migrations before anything
// reads it — a SQLite file (or `:memory:`) through bun:sqlite, a `libsql://` / `http(s)://` /
// `ws(s)://` libSQL server through @libsql/client — and gives the repo one way to run statements
// atomically on either driver. Files are not opened with @libsql/client: its native memory grows
// with the bytes written and is never given back (bench/libsql-memory.ts, bench/RESULTS.md).
import { createClient } from "@libsql/client";
import { Database, type SQLQueryBindings } from "bun:sqlite";
import type { BatchItem } from "drizzle-orm/batch";
import { drizzle as drizzleBunSqlite } from "drizzle-orm/bun-sqlite";
import { migrate as migrateBunSqlite } from "drizzle-orm/bun-sqlite/migrator";
import { drizzle as drizzleLibsql } from "drizzle-orm/libsql";
import { migrate as migrateLibsql } from "drizzle-orm/libsql/migrator";
import type { Query } from "drizzle-orm/sql";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import * as schema from "./schema.ts";

/** Either driver's drizzle database: every query on it is awaited, whichever it is. */
export type CoordinatorDb = BaseSQLiteDatabase<"sync" | "async", unknown, typeof schema>;
/** An insert, update or delete built on `db`, not yet run. */
export type Statement = BatchItem<"sqlite"> & { toSQL(): Query };

export interface CoordinatorStore {
  db: CoordinatorDb;
  /** Runs the statements in one transaction: all of them or none. */
  atomic(statements: Statement[]): Promise<void>;
}

export interface CoordinatorStoreHandle extends CoordinatorStore {
  close(): void;
}

const MIGRATIONS = resolve(import.meta.dir, "../../migrations/coordinator");
const REMOTE = /^(libsql|https?|wss?):\/\//;
// WAL + NORMAL: a committed row survives a crash of this process.
const LOCAL_PRAGMAS = ["PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA busy_timeout = 5000"];
const PRAGMAS = ["PRAGMA foreign_keys = ON"];

export async function openCoordinatorDb(location: string, authToken?: string): Promise<CoordinatorStoreHandle> {
  return REMOTE.test(location) ? openLibsqlStore(location, authToken) : openSqliteStore(location);
}

/** A SQLite file, or `:memory:`, through bun:sqlite. */
export function openSqliteStore(location: string): CoordinatorStoreHandle {
  const memory = location === ":memory:";
  if (!memory) mkdirSync(dirname(resolve(location)), { recursive: true });
  const client = new Database(memory ? location : resolve(location), { create: true });
  for (const pragma of [...LOCAL_PRAGMAS, ...PRAGMAS]) client.run(pragma);
  const db = drizzleBunSqlite(client, { schema });
  migrateBunSqlite(db, { migrationsFolder: MIGRATIONS });
  return {
    db,
    // bun:sqlite is synchronous: the transaction's callback must be too, and nothing else runs
    // on this connection until it returns. Each statement is finalized as soon as it ran: a
    // bun:sqlite statement keeps a copy of its bound values (results' traces, ~25 MB for 500 of
    // them) until it is finalized or garbage-collected, and its small wrapper gives the GC no
    // reason to hurry (drizzle's own run() never finalizes).
    atomic: async (statements) => {
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
    },
    close: () => client.close(),
  };
}

/** A libSQL server URL, or a `file:` URL (tests: the same repo over this driver, no server needed). */
export async function openLibsqlStore(url: string, authToken?: string): Promise<CoordinatorStoreHandle> {
  const client = createClient({ url, ...(authToken ? { authToken } : {}) });
  for (const pragma of [...(REMOTE.test(url) ? [] : LOCAL_PRAGMAS), ...PRAGMAS]) await client.execute(pragma);
  const db = drizzleLibsql(client, { schema });
  await migrateLibsql(db, { migrationsFolder: MIGRATIONS });
  return {
    db,
    // A libSQL batch is one transaction (and one round trip to a server).
    atomic: async (statements) => {
      if (statements.length > 0) await db.batch(statements as [Statement, ...Statement[]]);
    },
    close: () => client.close(),
  };
}
