// The coordinator's store refuses a database of a newer schema than its committed migrations, on
// both drivers (bun:sqlite for files, @libsql/client for server URLs; here a `file:` URL).
import { afterEach, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { codeVersion, SchemaTooNewError } from "../../lib/sqlite-schema-version.ts";
import { openCoordinatorDb, openLibsqlStore } from "./db.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

test("a coordinator database migrated by a newer Polar is refused by both drivers, naming both versions", async () => {
  const dir = mkdtempSync(join(tmpdir(), "polar-coord-db-"));
  dirs.push(dir);
  const path = join(dir, "coordinator.db");
  const store = await openCoordinatorDb(path);
  // As a newer Polar leaves it: one migration more than this code knows.
  await store.db.run(sql`INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('future', 99999999999999)`);
  store.close();
  const known = codeVersion(resolve(import.meta.dir, "../../migrations/coordinator")).version;
  for (const open of [() => openCoordinatorDb(path), () => openLibsqlStore(`file:${path}`)]) {
    const caught = await open().catch((err: unknown) => err);
    expect(caught).toBeInstanceOf(SchemaTooNewError);
    expect((caught as SchemaTooNewError).message).toStartWith(`coordinator store `);
    expect([(caught as SchemaTooNewError).storedVersion, (caught as SchemaTooNewError).codeVersion]).toEqual([known + 1, known]);
  }
});
