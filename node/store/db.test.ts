// The node store on bun:sqlite opens what the node wrote before it, on @libsql/client: a file
// migrated and written through drizzle's libsql driver (the old openNodeStore, and the old call
// writer's rows: drizzle's SQL and column encoders) reads back whole — sessions, calls stored
// against earlier calls, rollouts, results — and new calls are stored against the old ones.
import { afterEach, describe, expect, test } from "bun:test";
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import { migrate } from "drizzle-orm/libsql/migrator";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { RecordedCall } from "../../protocol/calls.ts";
import { codeVersion, SchemaTooNewError } from "../../lib/sqlite-schema-version.ts";
import { CallsRepo } from "./calls-repo.ts";
import { openNodeStore } from "./db.ts";
import { RolloutsRepo } from "./rollouts-repo.ts";
import * as schema from "./schema.ts";
import { SessionsRepo } from "./sessions-repo.ts";
import { SessionResult, TaskRequest } from "../../protocol/rollout.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), "polar-node-db-"));
  dirs.push(dir);
  return join(dir, "node.db");
}

function call(sessionId: string, seq: number, promptIds: number[]): RecordedCall {
  return {
    session_id: sessionId,
    seq,
    dialect: "chat",
    request: {
      model: "m",
      messages: Array.from({ length: seq + 1 }, (_, i) => ({ role: "user" as const, content: `turn ${i} "quoted" ✓` })),
      tools: [{ name: "bash", parameters: { type: "object" } }],
      sampling: { max_tokens: 8 },
      stream: false,
    },
    response: {
      id: `r${seq}`,
      model: "m",
      content: "ok",
      tool_calls: [],
      finish_reason: "stop",
      usage: { prompt_tokens: promptIds.length, completion_tokens: 1 },
    },
    prompt_ids: promptIds,
    output_ids: [7, 8],
    logprobs: [-0.125, -1e-9],
    engine_url: "http://127.0.0.1:1",
    policy_version: 2,
    timings: { queued_ms: 0.5, engine_ms: 1.25, total_ms: 2 },
    error: null,
    notes: seq === 1 ? { attempts: 2 } : null,
    started_at: new Date(0).toISOString(),
  };
}

const oldRequest = TaskRequest.parse({ task_id: "t1", instruction: "x", agent: { harness: "mini" } });
const oldResult = SessionResult.parse({
  session_id: "r1",
  task_id: "t1",
  status: "COMPLETED",
  trajectory: { status: "COMPLETED", traces: [] },
  metadata: { reward: 1 },
});

describe("node store on bun:sqlite", () => {
  test("a database the node wrote through @libsql/client opens and reads back; new calls extend its old ones", async () => {
    const path = tempDb();
    // What the node did before: @libsql/client, drizzle's libsql driver and migrator, rows through drizzle.
    const recorded = [call("ses_old", 0, [1, 2, 3]), call("ses_old", 1, [1, 2, 3, 7, 8, 4])];
    {
      const scratch = await openNodeStore(":memory:");
      await scratch.db.insert(schema.sessions).values({ id: "ses_old", tokenHash: "h", metadata: { rollout_id: "r1" }, createdAt: "2026-12-01T00:00:00.000Z" });
      const repo = new CallsRepo(scratch.db);
      for (const c of recorded) await repo.insert(c);
      const rows = await scratch.db.select().from(schema.calls);
      scratch.close();
      const client = createClient({ url: `file:${path}` });
      await client.execute("PRAGMA journal_mode = WAL");
      const old = drizzle(client, { schema });
      await migrate(old, { migrationsFolder: resolve(import.meta.dir, "../../migrations/node") });
      await old.insert(schema.sessions).values({ id: "ses_old", tokenHash: "h", metadata: { rollout_id: "r1" }, createdAt: "2026-12-01T00:00:00.000Z" });
      for (const row of rows) await old.insert(schema.calls).values(row);
      await old.insert(schema.rolloutTasks).values({ taskId: "t1", request: oldRequest, status: "completed", createdAt: "c", finishedAt: "f" });
      await old
        .insert(schema.rollouts)
        .values({ id: "r1", taskId: "t1", sampleIndex: 0, state: "COMPLETED", priority: 0, createdAt: "c", updatedAt: "u", gatewaySessionId: "ses_old" });
      await old.insert(schema.rolloutResults).values({ rolloutId: "r1", taskId: "t1", status: "COMPLETED", result: oldResult, createdAt: "c" });
      client.close();
    }

    const store = await openNodeStore(path);
    expect(store.db.$client.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    const calls = new CallsRepo(store.db);
    expect(await calls.list("ses_old")).toEqual(recorded);
    expect(await new SessionsRepo(store.db).get("ses_old")).toEqual({
      id: "ses_old",
      metadata: { rollout_id: "r1" },
      createdAt: "2026-12-01T00:00:00.000Z",
      closedAt: null,
    });
    const rollouts = new RolloutsRepo(store.db);
    expect(await rollouts.results("t1")).toEqual([oldResult]);
    expect((await rollouts.rolloutsOf("t1")).map((r) => [r.id, r.state, r.gatewaySessionId])).toEqual([["r1", "COMPLETED", "ses_old"]]);

    // The next call of the old session is stored against its last call (prompt and messages).
    const next = call("ses_old", 2, [1, 2, 3, 7, 8, 4, 7, 8, 5]);
    await calls.insert(next);
    expect(await calls.list("ses_old")).toEqual([...recorded, next]);
    // 3 ids of the first prompt, then one new id per later prompt (each extends the previous prompt + output).
    expect((await calls.storedBytes("ses_old")).prompt).toBe((3 + 1 + 1) * 4);
    store.close();
  });

  test("a node database of a newer schema is refused with both versions named", async () => {
    const path = tempDb();
    const store = await openNodeStore(path);
    // As a newer Polar would leave it: one migration more than this code knows.
    store.db.$client.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('future', ?)", [Date.now() + 365 * 86_400_000]);
    store.close();
    const caught = await openNodeStore(path).catch((err: unknown) => err);
    expect(caught).toBeInstanceOf(SchemaTooNewError);
    const known = codeVersion(resolve(import.meta.dir, "../../migrations/node")).version;
    expect((caught as SchemaTooNewError).message).toStartWith(`node store ${path} has schema version ${known + 1}, newer than this Polar's version ${known} `);
  });
});
