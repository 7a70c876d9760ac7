// Why: drizzle's migrator applies what a database lacks and silently ignores what it has beyond
// the code; a store written by a newer Polar (more migrations applied) would then be read and
// written by code that does not know its tables. Both stores check the stored schema version
// against the committed migrations before migrating, and refuse a newer one by name.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const MIGRATIONS_TABLE_EXISTS = "SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'";
export const STORED_VERSION = "SELECT count(*) AS applied, max(created_at) AS newest FROM __drizzle_migrations";

/** What a database's `__drizzle_migrations` holds: how many migrations ran, and the newest one's time. */
export interface StoredVersion {
  applied: number;
  newestMillis: number | null;
}

/** The schema this code migrates to: the committed journal's length and its newest entry. */
export interface CodeVersion {
  version: number;
  newestTag: string;
  newestMillis: number;
}

export class SchemaTooNewError extends Error {
  constructor(
    readonly label: string,
    readonly location: string,
    readonly storedVersion: number,
    readonly codeVersion: number,
    newestTag: string,
  ) {
    super(
      `${label} ${location} has schema version ${storedVersion}, newer than this Polar's version ${codeVersion} (its newest migration is ${newestTag}): ` +
        "it was written by a newer Polar; run that version, or give this one another database file",
    );
    this.name = "SchemaTooNewError";
  }
}

export function codeVersion(migrationsFolder: string): CodeVersion {
  const journal = JSON.parse(readFileSync(join(migrationsFolder, "meta", "_journal.json"), "utf8")) as { entries: Array<{ tag: string; when: number }> };
  const newest = journal.entries.at(-1);
  if (!newest) throw new Error(`no migrations in ${migrationsFolder}`);
  return { version: journal.entries.length, newestTag: newest.tag, newestMillis: newest.when };
}

/** Throws SchemaTooNewError when the database holds migrations the code does not (null: a new database). */
export function assertStoredVersionKnown(spec: { label: string; migrationsFolder: string }, location: string, stored: StoredVersion | null): void {
  if (!stored || stored.applied === 0) return;
  const code = codeVersion(spec.migrationsFolder);
  if (stored.applied > code.version || (stored.newestMillis !== null && stored.newestMillis > code.newestMillis)) {
    throw new SchemaTooNewError(spec.label, location, stored.applied, code.version, code.newestTag);
  }
}
