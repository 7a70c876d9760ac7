// Why: opens the coordinator's libSQL database — a SQLite file by default, or a `libsql://` /
// `http(s)://` libSQL server — and applies the committed migrations before anything reads it.
import { createClient, type Client } from "@libsql/client";
import { drizzle, type LibSQLDatabase } from "drizzle-orm/libsql";
import { migrate } from "drizzle-orm/libsql/migrator";
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import * as schema from "./schema.ts";

export type CoordinatorDb = LibSQLDatabase<typeof schema>;

export interface CoordinatorStoreHandle {
  db: CoordinatorDb;
  client: Client;
  close(): void;
}

const MIGRATIONS = resolve(import.meta.dir, "../../migrations/coordinator");
const REMOTE = /^(libsql|https?|wss?):\/\//;

export async function openCoordinatorDb(location: string, authToken?: string): Promise<CoordinatorStoreHandle> {
  const remote = REMOTE.test(location);
  if (!remote && location !== ":memory:") mkdirSync(dirname(resolve(location)), { recursive: true });
  const url = remote || location === ":memory:" ? location : `file:${resolve(location)}`;
  const client = createClient({ url, ...(authToken ? { authToken } : {}) });
  if (!remote) {
    // WAL + NORMAL: a committed row survives a crash of this process.
    await client.execute("PRAGMA journal_mode = WAL");
    await client.execute("PRAGMA synchronous = NORMAL");
    await client.execute("PRAGMA busy_timeout = 5000");
  }
  await client.execute("PRAGMA foreign_keys = ON");
  const db = drizzle(client, { schema });
  await migrate(db, { migrationsFolder: MIGRATIONS });
  return { db, client, close: () => client.close() };
}
