// The SQLite layer both services share, on real files: a database migrated by a newer Polar (one
// migration more than this checkout commits) is refused by both drivers with both versions named,
// and atomic() runs a list of statements all or none.
import { afterEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { migrate } from "drizzle-orm/bun-sqlite/migrator";
import { Database } from "bun:sqlite";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import * as nodeSchema from "../node/store/schema.ts";
import { openSqliteFile, type StoreSpec } from "./sqlite.ts";
import { openLibsql } from "./sqlite-libsql.ts";
import { codeVersion, SchemaTooNewError } from "./sqlite-schema-version.ts";

const NODE_MIGRATIONS = resolve(import.meta.dir, "../migrations/node");
const SPEC: StoreSpec<typeof nodeSchema> = { label: "node store", schema: nodeSchema, migrationsFolder: NODE_MIGRATIONS };

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "polar-sqlite-"));
  dirs.push(dir);
  return dir;
}

/** The committed migrations plus one more, as the checkout of a newer Polar would have them. */
function newerMigrations(dir: string): string {
  const folder = join(dir, "newer-migrations");
  cpSync(NODE_MIGRATIONS, folder, { recursive: true });
  const journalPath = join(folder, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalPath, "utf8")) as {
    entries: Array<{ idx: number; version: string; when: number; tag: string; breakpoints: boolean }>;
  };
  const last = journal.entries.at(-1)!;
  journal.entries.push({ ...last, idx: last.idx + 1, when: last.when + 1000, tag: "9999_from_the_future" });
  writeFileSync(journalPath, JSON.stringify(journal));
  writeFileSync(join(folder, "9999_from_the_future.sql"), "CREATE TABLE `future_things` (`id` text PRIMARY KEY NOT NULL);");
  return folder;
}

/** A database file migrated by that newer Polar. */
function fileFromNewerPolar(dir: string): string {
  const path = join(dir, "newer.db");
  const client = new Database(path, { create: true });
  migrate(drizzle(client), { migrationsFolder: newerMigrations(dir) });
  client.close();
  return path;
}

describe("schema version", () => {
  const expected = () => {
    const code = codeVersion(NODE_MIGRATIONS);
    return { storedVersion: code.version + 1, codeVersion: code.version };
  };

  test("a file migrated by a newer Polar is refused through bun:sqlite, naming both versions, and left as it was", () => {
    const path = fileFromNewerPolar(tempDir());
    const before = readFileSync(path);
    let caught: unknown;
    try {
      openSqliteFile(path, SPEC);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(SchemaTooNewError);
    const error = caught as SchemaTooNewError;
    expect({ storedVersion: error.storedVersion, codeVersion: error.codeVersion }).toEqual(expected());
    expect(error.message).toContain(`schema version ${expected().storedVersion}, newer than this Polar's version ${expected().codeVersion}`);
    expect(error.message).toContain(path);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  test("the same file is refused through @libsql/client (the coordinator's driver for servers)", async () => {
    const path = fileFromNewerPolar(tempDir());
    const caught = await openLibsql(`file:${path}`, SPEC).catch((err: unknown) => err);
    expect(caught).toBeInstanceOf(SchemaTooNewError);
    expect({ storedVersion: (caught as SchemaTooNewError).storedVersion, codeVersion: (caught as SchemaTooNewError).codeVersion }).toEqual(expected());
  });

  test("a file at this code's version, or an older one, opens (and an older one is migrated)", () => {
    const dir = tempDir();
    const path = join(dir, "current.db");
    openSqliteFile(path, SPEC).close();
    const reopened = openSqliteFile(path, SPEC);
    const applied = reopened.db.$client.query("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number };
    expect(applied.n).toBe(codeVersion(NODE_MIGRATIONS).version);
    reopened.close();
  });
});

describe("atomic", () => {
  test("runs every statement in one transaction: a failing one leaves none applied", async () => {
    const store = openSqliteFile(join(tempDir(), "a.db"), SPEC);
    const session = (id: string) => store.db.insert(nodeSchema.sessions).values({ id, tokenHash: `h-${id}`, metadata: {}, createdAt: "t" });
    await store.atomic([session("s1"), session("s2")]);
    // The third repeats s1's token hash (unique): the whole list fails, s3 included.
    const failed = await store
      .atomic([session("s3"), store.db.update(nodeSchema.sessions).set({ closedAt: "x" }).where(eq(nodeSchema.sessions.id, "s1")), session("s1")])
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(Error);
    const rows = await store.db.select({ id: nodeSchema.sessions.id, closedAt: nodeSchema.sessions.closedAt }).from(nodeSchema.sessions);
    expect(rows).toEqual([
      { id: "s1", closedAt: null },
      { id: "s2", closedAt: null },
    ]);
    store.close();
  });
});
