// Dynamic sampling on a cluster of real processes — `polar coordinator` (the bundled task file)
// and a `polar node` (process runtime) on the trainable mock engine, its weights set so one task is
// always failed and another always solved — and the TypeScript trainer client: a group whose real
// evaluated rewards are all equal is flagged, replaced by the next task of its list when asked (and
// not when not asked), the chain ends within its bound, the counts move, and the per-task pass
// rates the coordinator measured survive a SIGKILL and restart of the coordinator.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TrainerClient, type GroupMessage } from "../clients/typescript/trainer-client.ts";
import { TOKENS, waitFor } from "./support/coordinator/cluster.ts";
import { startMockEngine } from "../node/mock-engine/index.ts";
import type { StreamedResult } from "../protocol/trainer-stream.ts";
import { PolarProcesses } from "./helpers/polar-processes.ts";

const ROOT = join(import.meta.dir, "..");
const TASKS = join(ROOT, "tasks/tasks.jsonl");
const POLICY_TOKEN = "dynamic-sampling-policy-token";
const NEVER = "js-leap-year-century";
const ALWAYS = "py-slugify-separators";
const dir = mkdtempSync(join(tmpdir(), "polar-dynsamp-"));
const processes = new PolarProcesses();
const engine = await startMockEngine({ port: 0, tasks: TASKS, trainable: true, policyToken: POLICY_TOKEN, successProbability: 0.5, seed: 3 });
afterAll(async () => {
  await processes.killAll();
  await engine.stop();
  rmSync(dir, { recursive: true, force: true });
});

const coordinatorProcess = (port = 0) => processes.coordinator({ db: join(dir, "coordinator.db"), port, graceMs: 30_000, extra: ["--tasks", TASKS] });
const admin = (url: string, path: string) =>
  fetch(`${url}${path}`, { headers: { authorization: `Bearer ${TOKENS.adminToken}` } }).then((r) => r.json() as Promise<any>);

test("real rewards: a flat group is flagged, replaced by the next task when asked and not otherwise, the chain bounded, counted; pass rates survive kill -9", async () => {
  // Logits [solve, mis-solve]: the first task is (all but surely) never solved, the second always.
  const weights = await fetch(`${engine.url}/polar/policy`, {
    method: "POST",
    headers: { authorization: `Bearer ${POLICY_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ version: 1, bias: [0, 0], task_logits: { [NEVER]: [-40, 40], [ALWAYS]: [40, -40] } }),
  });
  expect(weights.status).toBe(200);

  const first = await coordinatorProcess();
  const port = Number(new URL(first.url).port);
  processes.clusterNode({ id: `dynsamp-${process.pid}`, db: join(dir, "node.db"), engineUrl: engine.url, coordinatorUrl: first.url });
  await waitFor(
    async () => (await admin(first.url, "/v1/admin/nodes")).nodes.some((n: { status: string }) => n.status === "connected"),
    "the node connected",
    120_000,
  );

  const groups: GroupMessage[] = [];
  const results: StreamedResult[] = [];
  const trainer = new TrainerClient({
    url: first.url,
    token: TOKENS.trainerToken,
    trainerId: "dynsamp",
    reconnectDelayMs: 200,
    onGroup: (g) => void groups.push(g),
    onResult: (r) => void results.push(r),
  });
  await trainer.ready();

  // Asked: flat → the next task of the list → flat again → the list is used up.
  const asked = await trainer.submit({
    task: NEVER,
    n: 2,
    agent: { harness: "mini" },
    min_reward_std: 0,
    replace_flat: { max_replacements: 3, source: "next_task", tasks: [ALWAYS] },
  });
  await waitFor(() => groups.length === 2, "the flat group and its replacement", 400_000);
  const [flat, replacement] = groups;
  expect(flat).toMatchObject({
    group_id: asked.group_id,
    task_id: NEVER,
    status: "completed",
    rewards: [0, 0],
    reward_std: 0,
    flat: true,
    replaced_by: replacement!.group_id,
    replacement_exhausted: null,
  });
  expect(replacement).toMatchObject({
    task_id: ALWAYS,
    status: "completed",
    rewards: [1, 1],
    reward_std: 0,
    flat: true,
    replaces: asked.group_id,
    replacement_index: 1,
    replaced_by: null,
    replacement_exhausted: "no_more_tasks",
  });
  // Every result of both groups arrived, evaluated by the node (not made up by the coordinator).
  expect(
    results
      .filter((r) => r.status === "COMPLETED")
      .map((r) => r.group_id)
      .sort(),
  ).toEqual([flat!.group_id, flat!.group_id, replacement!.group_id, replacement!.group_id].sort());
  expect(results.every((r) => r.traces.length > 0)).toBe(true);

  // Not asked: flagged (all rewards equal), nothing replaces it.
  const plain = await trainer.submit({ task: ALWAYS, n: 2, agent: { harness: "mini" } });
  await waitFor(() => groups.length === 3, "the group without replace_flat", 400_000);
  expect(groups[2]).toMatchObject({ group_id: plain.group_id, rewards: [1, 1], flat: true, replaced_by: null, replacement_exhausted: null });
  await Bun.sleep(500);
  expect(groups).toHaveLength(3);

  const counts = await admin(first.url, "/v1/admin/stats");
  expect({ flat: counts.groups_flat, replaced: counts.groups_replaced, exhausted: counts.replacements_exhausted, running: counts.groups_running }).toEqual({
    flat: 3,
    replaced: 1,
    exhausted: 1,
    running: 0,
  });
  const metrics = await (await fetch(`${first.url}/metrics`)).text();
  expect(metrics.split("\n").filter((l) => /^polar_(groups_flat|groups_replaced|group_replacements_exhausted)_total /.test(l))).toEqual([
    "polar_groups_flat_total 3",
    "polar_groups_replaced_total 1",
    "polar_group_replacements_exhausted_total 1",
  ]);

  const ranked = await trainer.taskStats({ target_pass_rate: 0.5, task_ids: [NEVER, ALWAYS, "py-lru-get-refresh"] });
  expect(ranked.tasks.map((t) => [t.task_id, t.pass_rate, t.groups, t.rollouts, t.flat_groups])).toEqual([
    [ALWAYS, 1, 2, 4, 2],
    [NEVER, 0, 1, 2, 1],
  ]);
  expect(ranked.unmeasured).toEqual(["py-lru-get-refresh"]);

  // kill -9 and restart on the same store: the estimates are what was measured.
  first.child.kill("SIGKILL");
  await first.child.exited;
  const second = await coordinatorProcess(port);
  const stored = await admin(second.url, `/v1/admin/tasks?target_pass_rate=0.5&task_id=${NEVER}&task_id=${ALWAYS}&task_id=py-lru-get-refresh`);
  expect(stored).toEqual(ranked);
  await trainer.ready();
  expect(await trainer.taskStats({ target_pass_rate: 0.5, task_ids: [NEVER, ALWAYS, "py-lru-get-refresh"] })).toEqual(ranked);
  trainer.close();
}, 900_000);
