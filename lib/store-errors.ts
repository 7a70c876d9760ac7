// Why: both services' stores fail the same way (SQLITE_FULL on a full disk, SQLITE_IOERR), and
// what is said of a failure must be SQLite's code and words only: drizzle's own message carries
// the query's parameters (results' token arrays), which never leave the process.

/** The SQLite error a drizzle error wraps (its `cause`), as `CODE: message` — never the query or its parameters. */
export function describeStoreError(err: unknown): { code: string; message: string } {
  let inner: unknown = err;
  for (let depth = 0; depth < 4 && inner instanceof Error && inner.cause !== undefined; depth++) inner = inner.cause;
  const e = inner as { code?: unknown; message?: unknown; name?: unknown } | null;
  const code = typeof e?.code === "string" ? e.code : typeof e?.name === "string" ? e.name : "Error";
  const message = typeof e?.message === "string" && !e.message.startsWith("Failed query") ? e.message.split("\n")[0]!.slice(0, 200) : "store write failed";
  return { code, message };
}

/** Whether `err` came from the store (a SQLite error, or drizzle's wrapper of one). */
export function isStoreError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (e.name === "SQLiteError" || e.name === "DrizzleQueryError" || (typeof code === "string" && code.startsWith("SQLITE_"))) return true;
  }
  return false;
}
