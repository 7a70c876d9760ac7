// Why: one place opens the node's libSQL/SQLite database, sets the pragmas that make recorded
// calls durable, and applies the committed migrations before anything reads or writes.
import { createClient, type Client } from "@libsql/client";
import { drizzle, type LibSQLDatabase } from "drizzle-orm/libsql";
import { migrate } from "drizzle-orm/libsql/migrator";
import Database from "libsql";
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import * as schema from "./schema.ts";

export type NodeDb = LibSQLDatabase<typeof schema>;

export interface OpenedStore {
  db: NodeDb;
  client: Client;
  /** A connection of its own for the per-call insert (node/store/call-writer.ts); null for `:memory:`. */
  writer: Database.Database | null;
  close(): void;
}

const MIGRATIONS = resolve(import.meta.dir, "../../migrations/node");

/** Opens (creating if needed) the SQLite file at `path` (or `:memory:`) and migrates it. */
export async function openNodeStore(path: string): Promise<OpenedStore> {
  if (path !== ":memory:") mkdirSync(dirname(resolve(path)), { recursive: true });
  const url = path === ":memory:" ? ":memory:" : `file:${resolve(path)}`;
  const client = createClient({ url });
  // WAL + NORMAL: a committed call survives a crash of this process; foreign keys cascade deletes.
  await client.execute("PRAGMA journal_mode = WAL");
  await client.execute("PRAGMA synchronous = NORMAL");
  await client.execute("PRAGMA foreign_keys = ON");
  await client.execute("PRAGMA busy_timeout = 5000");
  const db = drizzle(client, { schema });
  await migrate(db, { migrationsFolder: MIGRATIONS });
  const writer = path === ":memory:" ? null : new Database(resolve(path), { timeout: 5000 });
  // Pragmas are per connection (journal_mode persists in the file).
  writer?.exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000");
  return {
    db,
    client,
    writer,
    close: () => {
      writer?.close();
      client.close();
    },
  };
}
