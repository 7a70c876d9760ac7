// Why: opens the coordinator's database through the SQLite layer both services share — a SQLite
// file (or `:memory:`) through bun:sqlite (lib/sqlite.ts), a `libsql://` / `http(s)://` /
// `ws(s)://` libSQL server through @libsql/client (lib/sqlite-libsql.ts) — migrated, with one way
// to run statements atomically on either driver.
import { resolve } from "node:path";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import { openSqliteFile, type Statement, type StoreSpec } from "../../lib/sqlite.ts";
import { isLibsqlServerUrl, openLibsql } from "../../lib/sqlite-libsql.ts";
import * as schema from "./schema.ts";

export type { Statement } from "../../lib/sqlite.ts";

/** Either driver's drizzle database: every query on it is awaited, whichever it is. */
export type CoordinatorDb = BaseSQLiteDatabase<"sync" | "async", unknown, typeof schema>;

export interface CoordinatorStore {
  db: CoordinatorDb;
  /** Runs the statements in one transaction: all of them or none. */
  atomic(statements: Statement[]): Promise<void>;
}

export interface CoordinatorStoreHandle extends CoordinatorStore {
  close(): void;
}

const COORDINATOR_STORE: StoreSpec<typeof schema> = {
  label: "coordinator store",
  schema,
  migrationsFolder: resolve(import.meta.dir, "../../migrations/coordinator"),
};

export async function openCoordinatorDb(location: string, authToken?: string): Promise<CoordinatorStoreHandle> {
  return isLibsqlServerUrl(location) ? openLibsqlStore(location, authToken) : openSqliteStore(location);
}

/** A SQLite file, or `:memory:`, through bun:sqlite. */
export function openSqliteStore(location: string): CoordinatorStoreHandle {
  return openSqliteFile(location, COORDINATOR_STORE);
}

/** A libSQL server URL, or a `file:` URL (tests: the same repo over this driver, no server needed). */
export async function openLibsqlStore(url: string, authToken?: string): Promise<CoordinatorStoreHandle> {
  return openLibsql(url, COORDINATOR_STORE, authToken);
}
