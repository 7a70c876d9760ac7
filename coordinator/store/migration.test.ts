// A coordinator store written before rollout states were spelled as results' statuses (migrations
// 0000–0001, lower-case `queued` / `completed`) opens with this code: migration 0002 converts its
// rows, and a coordinator started on it resumes from them — the finished rollout's stored result
// streamed to its trainer with its traces typed, the queued one run on a node — with no
// lower-case state left. (A store of a newer schema is refused: db.test.ts.)
import { Database } from "bun:sqlite";
import { afterEach, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { openSqliteFile } from "../../lib/sqlite.ts";
import { codeVersion } from "../../lib/sqlite-schema-version.ts";
import { TaskRequest } from "../../protocol/rollout.ts";
import type { StreamedResult } from "../../protocol/trainer-stream.ts";
import { AGENT, startCluster, TASK, waitFor, type Cluster } from "../../test/support/coordinator/cluster.ts";
import { defaultResult } from "../../test/support/coordinator/simulated-node.ts";
import * as schema from "./schema.ts";

const MIGRATIONS = resolve(import.meta.dir, "../../migrations/coordinator");
const dirs: string[] = [];
let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The committed migrations as they were before `tag`: its journal cut there, the SQL files copied. */
function migrationsBefore(tag: string, into: string): string {
  const journal = JSON.parse(readFileSync(join(MIGRATIONS, "meta/_journal.json"), "utf8")) as { entries: { tag: string }[] };
  const kept = journal.entries.slice(
    0,
    journal.entries.findIndex((e) => e.tag === tag),
  );
  mkdirSync(join(into, "meta"), { recursive: true });
  writeFileSync(join(into, "meta/_journal.json"), JSON.stringify({ ...journal, entries: kept }));
  for (const e of kept) copyFileSync(join(MIGRATIONS, `${e.tag}.sql`), join(into, `${e.tag}.sql`));
  return into;
}

test("a store of the lower-case states is converted on open and resumed from: its stored result reaches the trainer typed, its queued rollout runs", async () => {
  const dir = mkdtempSync(join(tmpdir(), "polar-coord-migrate-"));
  dirs.push(dir);
  const path = join(dir, "coordinator.db");
  const old = openSqliteFile(path, {
    label: "coordinator store",
    schema,
    migrationsFolder: migrationsBefore("0002_upper_case_rollout_states", join(dir, "old-migrations")),
  });
  old.close();

  // Rows as the previous code wrote them: a trainer's group, one rollout finished with its result, one queued.
  const request = TaskRequest.parse({ ...TASK, agent: AGENT });
  const session = defaultResult({ rollout_id: "ro_done", request }, 1, 4);
  const sqlite = new Database(path);
  sqlite.run(
    "insert into groups (id, trainer_id, task_id, request, n, advantages, state, created_at) values ('grp_old', 'tr', ?, ?, 2, 'mean', 'running', 1)",
    [TASK.task_id, JSON.stringify(request)],
  );
  sqlite.run(
    "insert into rollouts (id, group_id, idx, seq, state, priority, image, attempt, policy_version_started, created_at, finished_at) values ('ro_done', 'grp_old', 0, 1, 'completed', 0, ?, 1, 0, 1, 2)",
    [TASK.runtime.image],
  );
  sqlite.run(
    "insert into rollouts (id, group_id, idx, seq, state, priority, image, attempt, created_at) values ('ro_wait', 'grp_old', 1, 2, 'queued', 0, ?, 0, 1)",
    [TASK.runtime.image],
  );
  // And a group that ended long ago, its rollout cancelled while queued (no result): nothing reloads it.
  sqlite.run(
    "insert into groups (id, trainer_id, task_id, request, n, advantages, state, created_at, finished_at) values ('grp_gone', 'tr', ?, ?, 1, 'mean', 'cancelled', 1, 2)",
    [TASK.task_id, JSON.stringify(request)],
  );
  sqlite.run(
    "insert into rollouts (id, group_id, idx, seq, state, priority, image, attempt, cause, created_at, finished_at) values ('ro_cancelled', 'grp_gone', 0, 0, 'cancelled', 0, ?, 0, 'cancelled', 1, 2)",
    [TASK.runtime.image],
  );
  sqlite.run(
    "insert into results (rollout_id, group_id, trainer_id, status, reward, session, policy_version_started, stale, created_at) values ('ro_done', 'grp_old', 'tr', 'COMPLETED', 1, ?, 0, 0, 2)",
    [JSON.stringify(session)],
  );
  sqlite.close();

  cluster = await startCluster({ db: path });
  const results: StreamedResult[] = [];
  const groups: { group_id: string; status: string }[] = [];
  await cluster.node("a");
  await cluster.trainer("tr", { onResult: (r) => void results.push(r), onGroup: (g) => void groups.push(g) });
  await waitFor(() => groups.length === 1, "the old group completed");
  expect(groups[0]).toMatchObject({ group_id: "grp_old", status: "completed" });
  const byId = new Map(results.map((r) => [r.rollout_id, r]));
  expect([...byId.keys()].sort()).toEqual(["ro_done", "ro_wait"]);
  expect(byId.get("ro_done")).toMatchObject({ status: "COMPLETED", reward: 1, traces: session.trajectory.traces, metadata: session.metadata });
  expect(byId.get("ro_wait")!.status).toBe("COMPLETED");

  const after = new Database(path, { readonly: true });
  expect(after.query("select id, state from rollouts order by seq").all()).toEqual([
    { id: "ro_cancelled", state: "CANCELLED" },
    { id: "ro_done", state: "COMPLETED" },
    { id: "ro_wait", state: "COMPLETED" },
  ]);
  expect(after.query("select count(*) as applied from __drizzle_migrations").get()).toEqual({ applied: codeVersion(MIGRATIONS).version });
  after.close();
}, 60_000);
