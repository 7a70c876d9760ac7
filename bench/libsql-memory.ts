// Why: the coordinator's RSS grew with the bytes it wrote while its JS heap stayed flat; this
// isolates the store driver: the same 10,000 inserts of ~40 KB through @libsql/client (what both
// stores used to open files with; now only libSQL server URLs) and bun:sqlite (what every SQLite
// file opens with, lib/sqlite.ts), RSS measured after a full GC. (The `libsql` package's row in
// bench/RESULTS.md was measured when the node's call writer used it directly.)
//
//   bun bench/libsql-memory.ts [--rows 10000] [--driver @libsql/client|bun:sqlite]
import { createClient } from "@libsql/client";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { rows: { type: "string" }, driver: { type: "string" } } });
const ROWS = Number(values.rows ?? 10_000);
const BATCH = 50;
const payload = JSON.stringify(Array.from({ length: 6000 }, () => Math.floor(Math.random() * 150_000)));
const rssMiB = () => Math.round(process.memoryUsage().rss / 1048576);

async function run(driver: string, path: string): Promise<void> {
  if (driver === "bun:sqlite") {
    const db = new Database(path);
    db.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
    for (let b = 0; b < ROWS / BATCH; b++)
      db.transaction(() => {
        for (let i = 0; i < BATCH; i++) insert.run(payload);
      })();
    db.close();
  } else {
    const client = createClient({ url: `file:${path}` });
    await client.execute("PRAGMA journal_mode = WAL");
    await client.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
    for (let b = 0; b < ROWS / BATCH; b++)
      await client.batch(
        Array.from({ length: BATCH }, () => ({ sql: "INSERT INTO t (v) VALUES (?)", args: [payload] })),
        "write",
      );
    client.close();
  }
}

if (values.driver) {
  // One driver per process, so neither sees the other's memory.
  const dir = mkdtempSync(join(tmpdir(), "polar-libsql-mem-"));
  const before = rssMiB();
  await run(values.driver, join(dir, "t.db"));
  Bun.gc(true);
  console.log(`| ${values.driver} | ${ROWS} × ${(payload.length / 1024).toFixed(0)} KB | ${before} | ${rssMiB()} |`);
  rmSync(dir, { recursive: true, force: true });
} else {
  console.log("| driver | rows written | RSS before MiB | RSS after (GC, closed) MiB |\n|---|---|---|---|");
  for (const driver of ["@libsql/client", "bun:sqlite"]) {
    const child = Bun.spawn(["bun", import.meta.path, "--driver", driver, "--rows", String(ROWS)], { stdout: "inherit", stderr: "inherit" });
    await child.exited;
  }
}
