// Why: a coordinator may keep its store on a libSQL server (`libsql://`, `http(s)://`,
// `ws(s)://`); @libsql/client is the client for those, and only for those (SQLite files open
// through lib/sqlite.ts). Same pragmas, schema-version check, migrations and atomic() as a file.
import { createClient } from "@libsql/client";
import { drizzle, type LibSQLDatabase } from "drizzle-orm/libsql";
import { migrate } from "drizzle-orm/libsql/migrator";
import { BUSY_TIMEOUT, CONNECTION_PRAGMAS, FILE_PRAGMAS, type Statement, type StoreSpec } from "./sqlite.ts";
import { assertStoredVersionKnown, MIGRATIONS_TABLE_EXISTS, STORED_VERSION } from "./sqlite-schema-version.ts";

const REMOTE = /^(libsql|https?|wss?):\/\//;

/** Whether `location` names a libSQL server rather than a SQLite file. */
export function isLibsqlServerUrl(location: string): boolean {
  return REMOTE.test(location);
}

export interface LibsqlStore<TSchema extends Record<string, unknown>> {
  db: LibSQLDatabase<TSchema>;
  /** Runs the statements in one transaction: a libSQL batch (also one round trip to a server). */
  atomic(statements: readonly Statement[]): Promise<void>;
  close(): void;
}

/** A libSQL server URL, or a `file:` URL (tests: the same store over this driver, no server needed). */
export async function openLibsql<TSchema extends Record<string, unknown>>(
  url: string,
  spec: StoreSpec<TSchema>,
  authToken?: string,
): Promise<LibsqlStore<TSchema>> {
  const client = createClient({ url, ...(authToken ? { authToken } : {}) });
  try {
    const file = !isLibsqlServerUrl(url);
    if (file) await client.execute(BUSY_TIMEOUT);
    const exists = (await client.execute(MIGRATIONS_TABLE_EXISTS)).rows.length > 0;
    const row = exists ? (await client.execute(STORED_VERSION)).rows[0] : undefined;
    assertStoredVersionKnown(spec, url, row ? { applied: Number(row.applied), newestMillis: row.newest === null ? null : Number(row.newest) } : null);
    for (const pragma of [...(file ? FILE_PRAGMAS : []), ...CONNECTION_PRAGMAS]) await client.execute(pragma);
    const db = drizzle(client, { schema: spec.schema });
    await migrate(db, { migrationsFolder: spec.migrationsFolder });
    return {
      db,
      atomic: async (statements) => {
        if (statements.length > 0) await db.batch(statements as [Statement, ...Statement[]]);
      },
      close: () => client.close(),
    };
  } catch (err) {
    client.close();
    throw err;
  }
}
