// The coordinator's repo over both store drivers, real SQLite files: bun:sqlite (what a file or
// `:memory:` opens with) and @libsql/client (what a libSQL server URL opens with; here a `file:`
// URL, so no server is needed). Same calls, same rows, same all-or-nothing batches.
import { afterEach, describe, expect, test } from "bun:test";
import { is, sql } from "drizzle-orm";
import { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openCoordinatorDb, openLibsqlStore, type CoordinatorStoreHandle } from "./db.ts";
import { CoordinatorRepo, type NewRollout, type ResultWithTraces, type StoredResult } from "./repo.ts";
import { defaultResult } from "../../test/support/coordinator/simulated-node.ts";
import { TaskRequest } from "../../protocol/rollout.ts";
import { packTraces } from "../../protocol/trace-frame.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDb(folder = ""): string {
  const dir = mkdtempSync(join(tmpdir(), "polar-coord-store-"));
  dirs.push(dir);
  return join(dir, folder, "coordinator.db");
}

const drivers: [string, (path: string) => Promise<CoordinatorStoreHandle>][] = [
  ["bun:sqlite", (path) => openCoordinatorDb(path)],
  ["@libsql/client", (path) => openLibsqlStore(`file:${path}`)],
];

const requestOf = (id: string) => TaskRequest.parse({ task_id: `task-${id}`, instruction: "x", agent: { harness: "mini" } });
function group(id: string) {
  return { id, trainerId: "t1", taskId: `task-${id}`, request: requestOf(id), n: 3, advantages: "none" as const, state: "running" as const, createdAt: 1 };
}
function members(groupId: string, firstSeq: number): NewRollout[] {
  return [0, 1, 2].map((idx) => ({ id: `${groupId}-r${idx}`, groupId, idx, seq: firstSeq + idx, state: "QUEUED", priority: 0, image: "img", createdAt: 1 }));
}
const sessionOf = (rolloutId: string) => defaultResult({ rollout_id: rolloutId, request: requestOf(rolloutId) }, 0.5, 2);
/** A trace blob as a node's trace frame carries it: stored and read back byte for byte. */
const blob = packTraces([{ prompt_ids: [1, 2], response_ids: [3], loss_mask: [1], response_logprobs: [-0.5] }])!.blob;

function result(rolloutId: string, groupId: string, traces: Uint8Array | null = null): StoredResult {
  return {
    rolloutId,
    groupId,
    trainerId: "t1",
    status: "COMPLETED",
    reward: 0.5,
    session: sessionOf(rolloutId),
    traces,
    policyVersionStarted: 3,
    stale: true,
    cause: null,
    acked: false,
  };
}

describe.each(drivers)("coordinator repo over %s", (_name, open) => {
  test("a group, its assignments, results and acks are read back the same after reopening the file", async () => {
    const path = tempDb();
    const first = await open(path);
    const repo = new CoordinatorRepo(first);
    await repo.insertGroup(group("g1"), members("g1", 1));
    await repo.assign(
      [
        { rolloutId: "g1-r0", nodeId: "n1", attempt: 1, policyVersion: 3 },
        { rolloutId: "g1-r1", nodeId: "n1", attempt: 1, policyVersion: 3 },
      ],
      10,
    );
    await repo.saveResults([result("g1-r0", "g1", blob)], 20);
    await repo.ack([{ trainerId: "t1", ids: ["g1-r0"] }], 30);
    first.close();

    const second = await open(path);
    const reopened = new CoordinatorRepo(second);
    const active = await reopened.loadActive();
    expect(active.groups.map((g) => [g.id, g.request])).toEqual([["g1", requestOf("g1")]]);
    expect(active.rollouts.map((r) => [r.id, r.state, r.nodeId, r.attempt, r.policyVersionStarted, r.assignedAt])).toEqual([
      ["g1-r1", "ASSIGNED", "n1", 1, 3, 10],
      ["g1-r2", "QUEUED", null, 0, null, null],
    ]);
    const [{ traces, ...stored }] = (await reopened.resultsById(["g1-r0"])) as [ResultWithTraces];
    expect(stored).toEqual({
      rolloutId: "g1-r0",
      groupId: "g1",
      trainerId: "t1",
      status: "COMPLETED",
      reward: 0.5,
      session: sessionOf("g1-r0"),
      policyVersionStarted: 3,
      stale: true,
      createdAt: 20,
      ackedAt: 30,
    });
    expect(Buffer.from(traces!).equals(blob)).toBe(true);
    expect(await reopened.unackedIds("t1")).toEqual([]);
    expect(await reopened.countRolloutsByState()).toEqual({ ASSIGNED: 1, COMPLETED: 1, QUEUED: 1 });
    expect(await reopened.maxSeq()).toBe(3);
    second.close();
  });

  test("a batch that fails part-way writes none of it", async () => {
    const store = await open(tempDb());
    const repo = new CoordinatorRepo(store);
    await repo.insertGroup(group("g1"), members("g1", 1));
    // The group row goes in first; its rollouts collide with g1's ids, so the group must not stay.
    const clash = members("g2", 4).map((r, i) => ({ ...r, id: `g1-r${i}` }));
    await expect(repo.insertGroup(group("g2"), clash)).rejects.toThrow();
    expect(await repo.findGroup("g2")).toBeUndefined();
    // A result for a rollout that does not exist (foreign keys are on) undoes the ones before it.
    await expect(repo.saveResults([result("g1-r0", "g1"), result("nope", "g1")], 20)).rejects.toThrow();
    expect(await repo.resultsById(["g1-r0"])).toEqual([]);
    expect((await repo.groupRollouts("g1")).map((r) => r.state)).toEqual(["QUEUED", "QUEUED", "QUEUED"]);
    store.close();
  });
});

describe("store driver", () => {
  test("a file (its folder created) and :memory: open with bun:sqlite, the file in WAL mode", async () => {
    const file = await openCoordinatorDb(tempDb("not/yet"));
    const memory = await openCoordinatorDb(":memory:");
    expect([is(file.db, BunSQLiteDatabase), is(memory.db, BunSQLiteDatabase)]).toEqual([true, true]);
    expect(await file.db.all(sql`PRAGMA journal_mode`)).toEqual([{ journal_mode: "wal" }]);
    await new CoordinatorRepo(memory).setMeta("policy_version", "7");
    expect(await new CoordinatorRepo(memory).getMeta("policy_version")).toBe("7");
    file.close();
    memory.close();
  });

  test("a file written through @libsql/client (the driver files used to open with) reads back through bun:sqlite", async () => {
    const path = tempDb();
    const before = await openLibsqlStore(`file:${path}`);
    await new CoordinatorRepo(before).insertGroup(group("g1"), members("g1", 1));
    before.close();
    const after = await openCoordinatorDb(path);
    expect((await new CoordinatorRepo(after).groupRollouts("g1")).map((r) => r.id)).toEqual(["g1-r0", "g1-r1", "g1-r2"]);
    after.close();
  });
});
