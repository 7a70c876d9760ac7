import { afterEach, describe, expect, test } from "bun:test";
import { LibsqlError } from "@libsql/client";
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
    response: { id: `r${seq}`, model: "m", content: "ok", tool_calls: [], finish_reason: "stop", usage: { prompt_tokens: prompt_ids.length, completion_tokens: 1 } },
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
  test("the store's own connection writes the same rows as drizzle's insert", async () => {
    const stores = [await openNodeStore(tempDb()), await openNodeStore(tempDb())];
    expect(stores[0]!.writer).not.toBeNull();
    const rows = [];
    for (const [i, store] of stores.entries()) {
      await store.db.insert(sessions).values({ id: "ses_1", tokenHash: "h", metadata: {}, createdAt: "t" });
      const repo = new CallsRepo(store.db, undefined, i === 0 ? store.writer : null);
      for (let seq = 0; seq < 3; seq++) await repo.insert(call("ses_1", seq, [1, 2, 3, ...Array.from({ length: seq }, (_, k) => 10 + k)]));
      rows.push(await store.db.select().from(calls));
      expect(await repo.list("ses_1")).toEqual([0, 1, 2].map((seq) => call("ses_1", seq, [1, 2, 3, ...Array.from({ length: seq }, (_, k) => 10 + k)])));
      store.close();
    }
    expect(rows[0]!.length).toBe(3);
    expect(rows[0]).toEqual(rows[1]!);
  });

  test("a call of a deleted session fails as not_found, caused by the foreign-key violation @libsql/client would report", async () => {
    const store = await openNodeStore(tempDb());
    const { row } = await new SessionsRepo(store.db).create({});
    const repo = new CallsRepo(store.db, undefined, store.writer);
    await new SessionsRepo(store.db).delete(row.id);
    const failure = await repo.insert(call(row.id, 0, [1])).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(PolarError);
    expect((failure as PolarError).code).toBe("not_found");
    const cause = (failure as PolarError).cause;
    expect(cause).toBeInstanceOf(LibsqlError);
    expect((cause as LibsqlError).code).toBe("SQLITE_CONSTRAINT");
    expect((cause as LibsqlError).extendedCode).toBe("SQLITE_CONSTRAINT_FOREIGNKEY");
    store.close();
  });

  test("calls finishing together share a commit; one that fails (deleted session) fails alone", async () => {
    const path = tempDb();
    const store = await openNodeStore(path);
    const sessionsRepo = new SessionsRepo(store.db);
    const [kept, deleted] = [(await sessionsRepo.create({})).row, (await sessionsRepo.create({})).row];
    await sessionsRepo.delete(deleted.id);
    const repo = new CallsRepo(store.db, undefined, store.writer);
    const outcomes = await Promise.allSettled([
      repo.insert(call(kept.id, 0, [1])),
      repo.insert(call(deleted.id, 0, [1])),
      repo.insert(call(kept.id, 1, [1, 2])),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const failure = (outcomes[1] as PromiseRejectedResult).reason as PolarError;
    expect([failure.code, (failure.cause as LibsqlError).code]).toEqual(["not_found", "SQLITE_CONSTRAINT"]);
    store.close();
    // Committed: a fresh process sees both calls of the kept session.
    const reopened = await openNodeStore(path);
    expect(await new CallsRepo(reopened.db).list(kept.id)).toEqual([call(kept.id, 0, [1]), call(kept.id, 1, [1, 2])]);
    reopened.close();
  });

  test("an in-memory store has no second connection and records through drizzle", async () => {
    const store = await openNodeStore(":memory:");
    expect(store.writer).toBeNull();
    const { row } = await new SessionsRepo(store.db).create({});
    const repo = new CallsRepo(store.db, undefined, store.writer);
    await repo.insert(call(row.id, 0, [1, 2]));
    expect(await repo.list(row.id)).toEqual([call(row.id, 0, [1, 2])]);
    store.close();
  });
});
