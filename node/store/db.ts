// Why: one place opens the node's SQLite database — through the SQLite layer both services share
// (lib/sqlite.ts: bun:sqlite, the pragmas that make recorded calls durable, the schema-version
// check, the committed migrations) — before anything reads or writes it.
import { resolve } from "node:path";
import { openSqliteFile, type SqliteDb, type Statement, type StoreSpec } from "../../lib/sqlite.ts";
import * as schema from "./schema.ts";

/**
 * drizzle's bun-sqlite database over the node's schema, and `batch`: statements run in one
 * transaction, all or none (what the repos ran as a libSQL batch before; lib/sqlite.ts runs it).
 */
export type NodeDb = SqliteDb<typeof schema> & { batch(statements: readonly Statement[]): Promise<void> };

export interface OpenedStore {
  db: NodeDb;
  close(): void;
}

const NODE_STORE: StoreSpec<typeof schema> = {
  label: "node store",
  schema,
  migrationsFolder: resolve(import.meta.dir, "../../migrations/node"),
};

/** Opens (creating if needed) the SQLite file at `path` (or `:memory:`) and migrates it. */
export async function openNodeStore(path: string): Promise<OpenedStore> {
  const file = openSqliteFile(path, NODE_STORE);
  return { db: Object.assign(file.db, { batch: file.atomic }), close: file.close };
}
