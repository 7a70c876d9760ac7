import { afterEach, describe, expect, test } from "bun:test";
import { SQLiteError } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RecordedCall } from "../../protocol/calls.ts";
import { PolarError } from "../../protocol/errors.ts";
import { CallsRepo } from "./calls-repo.ts";
import { openNodeStore } from "./db.ts";
import { calls, sessions } from "./schema.ts";
import { SessionsRepo } from "./sessions-repo.ts";

const dirs: string[] = [];
function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), "polar-writer-"));
  dirs.push(dir);
  return join(dir, "node.db");
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function call(session_id: string, seq: number, prompt_ids: number[]): RecordedCall {
  return {
    session_id,
    seq,
    dialect: "chat",
    request: {
      model: "m",
      messages: [{ role: "user", content: `turn ${seq}\n"quoted"` }],
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
      usage: { prompt_tokens: prompt_ids.length, completion_tokens: 1 },
    },
    prompt_ids,
    output_ids: [7],
    logprobs: [-0.125],
    engine_url: "http://127.0.0.1:1",
    policy_version: 2,
    timings: { queued_ms: 0.5, engine_ms: 1.25, total_ms: 2 },
    error: seq === 1 ? { code: "engine_error", message: "boom" } : null,
    notes: seq === 1 ? { attempts: 2 } : null,
    started_at: new Date(0).toISOString(),
  };
}

describe("the per-call insert", () => {
  test("the prepared insert writes the rows drizzle's own insert writes (same SQL, same column encoders)", async () => {
    const stores = [await openNodeStore(tempDb()), await openNodeStore(tempDb())];
    for (const store of stores) await store.db.insert(sessions).values({ id: "ses_1", tokenHash: "h", metadata: {}, createdAt: "t" });
    const repo = new CallsRepo(stores[0]!.db);
    const recorded = [0, 1, 2].map((seq) => call("ses_1", seq, [1, 2, 3, ...Array.from({ length: seq }, (_, k) => 10 + k)]));
    for (const c of recorded) await repo.insert(c);
    const written = await stores[0]!.db.select().from(calls);
    expect(written.length).toBe(3);
    // The same rows through drizzle's query builder: identical columns and bytes read back.
    for (const row of written) await stores[1]!.db.insert(calls).values(row);
    expect(await stores[1]!.db.select().from(calls)).toEqual(written);
    const raw = (store: (typeof stores)[number]) => store.db.$client.query("SELECT * FROM calls ORDER BY seq").all();
    expect(raw(stores[0]!)).toEqual(raw(stores[1]!));
    expect(await repo.list("ses_1")).toEqual(recorded);
    for (const store of stores) store.close();
  });

  test("a call of a deleted session fails as not_found, caused by SQLite's foreign-key violation", async () => {
    const store = await openNodeStore(tempDb());
    const { row } = await new SessionsRepo(store.db).create({});
    const repo = new CallsRepo(store.db);
    await new SessionsRepo(store.db).delete(row.id);
    const failure = await repo.insert(call(row.id, 0, [1])).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(PolarError);
    expect((failure as PolarError).code).toBe("not_found");
    const cause = (failure as PolarError).cause;
    expect(cause).toBeInstanceOf(SQLiteError);
    expect((cause as SQLiteError).code).toBe("SQLITE_CONSTRAINT_FOREIGNKEY");
    store.close();
  });

  test("calls finishing together share a commit; one that fails (deleted session) fails alone", async () => {
    const path = tempDb();
    const store = await openNodeStore(path);
    const sessionsRepo = new SessionsRepo(store.db);
    const [kept, deleted] = [(await sessionsRepo.create({})).row, (await sessionsRepo.create({})).row];
    await sessionsRepo.delete(deleted.id);
    const repo = new CallsRepo(store.db);
    const outcomes = await Promise.allSettled([
      repo.insert(call(kept.id, 0, [1])),
      repo.insert(call(deleted.id, 0, [1])),
      repo.insert(call(kept.id, 1, [1, 2])),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const failure = (outcomes[1] as PromiseRejectedResult).reason as PolarError;
    expect([failure.code, (failure.cause as SQLiteError).code]).toEqual(["not_found", "SQLITE_CONSTRAINT_FOREIGNKEY"]);
    store.close();
    // Committed: a fresh process sees both calls of the kept session.
    const reopened = await openNodeStore(path);
    expect(await new CallsRepo(reopened.db).list(kept.id)).toEqual([call(kept.id, 0, [1]), call(kept.id, 1, [1, 2])]);
    reopened.close();
  });

  test("an in-memory store records through the same prepared insert", async () => {
    const store = await openNodeStore(":memory:");
    const { row } = await new SessionsRepo(store.db).create({});
    const repo = new CallsRepo(store.db);
    await Promise.all([repo.insert(call(row.id, 0, [1, 2])), repo.insert(call(row.id, 1, [1, 2, 7, 3]))]);
    expect(await repo.list(row.id)).toEqual([call(row.id, 0, [1, 2]), call(row.id, 1, [1, 2, 7, 3])]);
    store.close();
  });
});
