// Dynamic sampling over real WebSockets, a real SQLite file and simulated nodes whose rewards the
// test chooses: a group with equal rewards is flagged flat (and counted), replaced when its submit
// asked and not otherwise, the replacement bound holds, `next_task` walks its list, the links are
// in both group messages, and per-task pass rates move as groups finish and survive a restart.
import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GroupMessage } from "../clients/typescript/trainer-client.ts";
import type { Assignment } from "../protocol/node-link.ts";
import { GroupSpec, type StreamedResult } from "../protocol/trainer-stream.ts";
import type { CoordinatorEvents } from "./events.ts";
import { AGENT, startCluster, TASK, waitFor, type Cluster } from "../test/support/coordinator/cluster.ts";
import { defaultResult } from "../test/support/coordinator/simulated-node.ts";

let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

const T = 60_000;

/** Rewards by group, in the order groups first reach a node: the k-th group gets `patterns[k]` (the last one repeats). */
function rewardsByGroupOrder(patterns: number[][]): (a: Assignment) => ReturnType<typeof defaultResult> {
  const order = new Map<string, number>();
  const used = new Map<string, number>();
  return (a) => {
    if (!order.has(a.group_id)) order.set(a.group_id, order.size);
    const pattern = patterns[Math.min(order.get(a.group_id)!, patterns.length - 1)]!;
    const i = used.get(a.group_id) ?? 0;
    used.set(a.group_id, i + 1);
    return defaultResult(a, pattern[i % pattern.length]);
  };
}

interface Counts {
  groups_flat: number;
  groups_replaced: number;
  replacements_exhausted: number;
}
const stats = async (c: Cluster) => (await (await c.admin("/v1/admin/stats")).json()) as Counts & { queue_depth: number; groups_running: number };
const counts = async (c: Cluster): Promise<Counts> => {
  const { groups_flat, groups_replaced, replacements_exhausted } = await stats(c);
  return { groups_flat, groups_replaced, replacements_exhausted };
};

/** Every sampling event the coordinator emits, in order. */
function recordSamplingEvents(c: Cluster) {
  const seen: { name: string; payload: Record<string, unknown> }[] = [];
  const events = c.coordinator.coordinator.events;
  for (const name of ["group.flat", "group.replaced", "group.replacements_exhausted"] as const satisfies readonly (keyof CoordinatorEvents)[]) {
    events.on(name, (payload) => void seen.push({ name, payload: payload as Record<string, unknown> }));
  }
  return seen;
}

/** The Prometheus samples of one metric name (no labels). */
async function metric(c: Cluster, name: string): Promise<number> {
  const text = await (await fetch(`${c.coordinator.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`no ${name} in /metrics`);
  return Number(line.split(" ")[1]);
}

describe("flat groups", () => {
  test(
    "equal rewards are flagged with their measured std, counted, and not replaced when the submit did not ask",
    async () => {
      cluster = await startCluster();
      await cluster.node("a", { makeResult: rewardsByGroupOrder([[1], [1, 0]]) });
      const groups: GroupMessage[] = [];
      const results: StreamedResult[] = [];
      const trainer = await cluster.trainer("tr", { onGroup: (g) => void groups.push(g), onResult: (r) => void results.push(r) });
      const seen = recordSamplingEvents(cluster);
      const flat = await trainer.submit({ task: TASK, n: 4, agent: AGENT, min_reward_std: 0 });
      await waitFor(() => groups.length === 1, "the flat group");
      const spread = await trainer.submit({ task: TASK, n: 4, agent: AGENT, min_reward_std: 0 });
      await waitFor(() => groups.length === 2 && results.length === 8, "the second group and every result");

      const [first, second] = groups;
      // Nothing hidden: the flat group arrives whole, with its rewards, its std and the flag.
      expect(first).toMatchObject({
        group_id: flat.group_id,
        task_id: "t-echo",
        status: "completed",
        rewards: [1, 1, 1, 1],
        advantages: [0, 0, 0, 0],
        reward_std: 0,
        flat: true,
        replacement_index: 0,
        replaces: null,
        replaced_by: null,
        replacement_exhausted: null,
      });
      expect(results.filter((r) => r.group_id === flat.group_id)).toHaveLength(4);
      expect(second).toMatchObject({ group_id: spread.group_id, flat: false, reward_std: 0.5, replaced_by: null });
      expect(seen.map((e) => e.name)).toEqual(["group.flat"]);
      expect(seen[0]!.payload).toMatchObject({
        group_id: flat.group_id,
        task_id: "t-echo",
        trainer_id: "tr",
        reward_std: 0,
        min_reward_std: 0,
        replacement_index: 0,
      });
      expect(await counts(cluster)).toEqual({ groups_flat: 1, groups_replaced: 0, replacements_exhausted: 0 });
      expect(await metric(cluster, "polar_groups_flat_total")).toBe(1);
      expect(await metric(cluster, "polar_groups_replaced_total")).toBe(0);
      const s = await stats(cluster);
      expect({ queue_depth: s.queue_depth, groups_running: s.groups_running }).toEqual({ queue_depth: 0, groups_running: 0 });
    },
    T,
  );

  test(
    "min_reward_std is a threshold on the measured std; without it only equal rewards are flat; one reward has no spread to measure",
    async () => {
      cluster = await startCluster();
      // [1, 0.9] has std 0.05; [1, 1] is flat by the default rule; a single reward is not measured.
      await cluster.node("a", { makeResult: rewardsByGroupOrder([[1, 0.9], [1, 0.9], [1, 1], [0]]) });
      const groups: GroupMessage[] = [];
      const trainer = await cluster.trainer("tr", { onGroup: (g) => void groups.push(g) });
      for (const [i, spec] of [{ min_reward_std: 0.1 }, { min_reward_std: 0.01 }, {}, { min_reward_std: 0.5 }].entries()) {
        await trainer.submit({ task: TASK, n: i === 3 ? 1 : 2, agent: AGENT, ...spec });
        await waitFor(() => groups.length === i + 1, `group ${i + 1}`);
      }
      expect(groups.map((g) => g.reward_std)).toEqual([expect.closeTo(0.05, 12), expect.closeTo(0.05, 12), 0, null]);
      expect(groups.map((g) => g.flat)).toEqual([true, false, true, false]);
      expect(await counts(cluster)).toEqual({ groups_flat: 2, groups_replaced: 0, replacements_exhausted: 0 });
    },
    T,
  );

  test(
    "replaced when asked: a fresh group of the same task, linked both ways, delivered like any group",
    async () => {
      cluster = await startCluster();
      const node = await cluster.node("a", { makeResult: rewardsByGroupOrder([[0], [1, 0, 1]]) });
      const groups: GroupMessage[] = [];
      const results: StreamedResult[] = [];
      const trainer = await cluster.trainer("tr", { onGroup: (g) => void groups.push(g), onResult: (r) => void results.push(r) });
      const seen = recordSamplingEvents(cluster);
      const submitted = await trainer.submit({ task: TASK, n: 3, agent: AGENT, min_reward_std: 0, replace_flat: { max_replacements: 3 } });
      await waitFor(() => groups.length === 2 && results.length === 6, "the flat group, its replacement and their 6 results");

      const [flat, replacement] = groups;
      expect(flat).toMatchObject({
        group_id: submitted.group_id,
        flat: true,
        reward_std: 0,
        rewards: [0, 0, 0],
        replacement_index: 0,
        replaced_by: replacement!.group_id,
        replacement_exhausted: null,
      });
      expect(replacement).toMatchObject({
        task_id: "t-echo",
        flat: false,
        replacement_index: 1,
        replaces: submitted.group_id,
        replaced_by: null,
        replacement_exhausted: null,
      });
      expect(replacement!.rewards.slice().sort()).toEqual([0, 1, 1]);
      // Its results reach the trainer under the new group, each once; it ran the same request.
      expect(new Set(results.filter((r) => r.group_id === replacement!.group_id).map((r) => r.rollout_id))).toEqual(new Set(replacement!.rollout_ids));
      expect(trainer.counts.duplicates).toBe(0);
      const requests = node.received.map((a) => ({ group: a.group_id, request: a.request }));
      expect(requests.filter((r) => r.group === replacement!.group_id).map((r) => r.request)).toEqual(
        requests.filter((r) => r.group === submitted.group_id).map((r) => r.request),
      );
      expect(seen.map((e) => e.name)).toEqual(["group.flat", "group.replaced"]);
      expect(seen[1]!.payload).toMatchObject({
        group_id: submitted.group_id,
        replacement_group_id: replacement!.group_id,
        task_id: "t-echo",
        replacement_index: 1,
      });
      expect(await counts(cluster)).toEqual({ groups_flat: 1, groups_replaced: 1, replacements_exhausted: 0 });
    },
    T,
  );

  test(
    "the bound holds: a task that stays flat gets max_replacements replacements, then its chain ends exhausted",
    async () => {
      cluster = await startCluster();
      await cluster.node("a", { makeResult: rewardsByGroupOrder([[1]]) });
      const groups: GroupMessage[] = [];
      const trainer = await cluster.trainer("tr", { onGroup: (g) => void groups.push(g) });
      const seen = recordSamplingEvents(cluster);
      const submitted = await trainer.submit({ task: TASK, n: 2, agent: AGENT, replace_flat: { max_replacements: 2, source: "same_task" } });
      await waitFor(() => groups.length === 3, "the group and its 2 replacements");
      await cluster.coordinator.coordinator.settled();
      await Bun.sleep(300); // time for a (wrong) fourth group to show up
      expect(groups).toHaveLength(3);
      expect(groups.map((g) => g.replacement_index)).toEqual([0, 1, 2]);
      expect(groups.every((g) => g.flat && g.reward_std === 0)).toBe(true);
      expect(groups[0]!.group_id).toBe(submitted.group_id);
      expect(groups[1]!.replaces).toBe(groups[0]!.group_id);
      expect(groups[0]!.replaced_by).toBe(groups[1]!.group_id);
      expect(groups[2]!.replaces).toBe(groups[1]!.group_id);
      expect(groups[1]!.replaced_by).toBe(groups[2]!.group_id);
      expect(groups[2]).toMatchObject({ replaced_by: null, replacement_exhausted: "max_replacements" });
      expect(groups.slice(0, 2).map((g) => g.replacement_exhausted)).toEqual([null, null]);
      expect(seen.at(-1)).toEqual({
        name: "group.replacements_exhausted",
        payload: expect.objectContaining({
          group_id: groups[2]!.group_id,
          root_group_id: submitted.group_id,
          replacement_index: 2,
          max_replacements: 2,
          reason: "max_replacements",
        }),
      });
      expect(await counts(cluster)).toEqual({ groups_flat: 3, groups_replaced: 2, replacements_exhausted: 1 });
      expect(await metric(cluster, "polar_group_replacements_exhausted_total")).toBe(1);
      const listed = (await (await cluster.admin("/v1/admin/groups")).json()) as { groups: { group_id: string; state: string }[] };
      expect(listed.groups.map((g) => g.state)).toEqual(["completed", "completed", "completed"]);
      expect((await stats(cluster)).queue_depth).toBe(0);
    },
    T,
  );

  test(
    "next_task walks its list (task file ids and inline tasks, the submit's agent and metadata over each); a list used up ends the chain",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "polar-dyn-"));
      const tasks = join(dir, "tasks.jsonl");
      writeFileSync(
        tasks,
        `${JSON.stringify({ task_id: "t-file", instruction: "from the task file", runtime: { image: "polar-busybox:latest" }, evaluator: { strategy: "none" }, metadata: { source: "file" } })}\n`,
      );
      cluster = await startCluster({ tasks });
      const node = await cluster.node("a", { makeResult: rewardsByGroupOrder([[0]]) });
      const groups: GroupMessage[] = [];
      const trainer = await cluster.trainer("tr", { onGroup: (g) => void groups.push(g) });
      const inline = { task_id: "t-inline", instruction: "inline", evaluator: { strategy: "none" } };
      await trainer.submit({
        task: TASK,
        n: 2,
        agent: AGENT,
        metadata: { run: "r1" },
        replace_flat: { max_replacements: 5, source: "next_task", tasks: ["t-file", inline] },
      });
      await waitFor(() => groups.length === 3, "the group and its 2 replacements");
      await cluster.coordinator.coordinator.settled();
      await Bun.sleep(300);
      expect(groups).toHaveLength(3);
      expect(groups.map((g) => g.task_id)).toEqual(["t-echo", "t-file", "t-inline"]);
      expect(groups[2]).toMatchObject({ flat: true, replaced_by: null, replacement_exhausted: "no_more_tasks" });
      const byGroup = new Map(node.received.map((a) => [a.group_id, a.request]));
      const fileRequest = byGroup.get(groups[1]!.group_id)!;
      expect(fileRequest).toMatchObject({
        task_id: "t-file",
        instruction: "from the task file",
        agent: { harness: "mini" },
        metadata: { source: "file", run: "r1" },
      });
      expect(byGroup.get(groups[2]!.group_id)).toMatchObject({ task_id: "t-inline", instruction: "inline", metadata: { run: "r1" } });
      expect(await counts(cluster)).toEqual({ groups_flat: 3, groups_replaced: 2, replacements_exhausted: 1 });
      // A list naming a task the task file does not hold is refused at submit, before anything runs.
      await expect(
        trainer.submit({ task: TASK, n: 2, agent: AGENT, replace_flat: { max_replacements: 1, source: "next_task", tasks: ["no-such-task"] } }),
      ).rejects.toThrow(/not_found: replace_flat.tasks\[0\]/);
      rmSync(dir, { recursive: true, force: true });
    },
    T,
  );

  test(
    "a cancelled group is never flat nor replaced, whatever its rewards",
    async () => {
      cluster = await startCluster();
      const node = await cluster.node("a", { runMs: () => null });
      const groups: GroupMessage[] = [];
      const trainer = await cluster.trainer("tr", { onGroup: (g) => void groups.push(g) });
      const { group_id } = await trainer.submit({ task: TASK, n: 3, agent: AGENT, replace_flat: { max_replacements: 2 } });
      await waitFor(() => node.received.length === 3, "all 3 running");
      node.finishHeld(2, (a) => defaultResult(a, 1));
      await waitFor(
        async () => ((await (await cluster!.admin("/v1/admin/stats")).json()) as { results_accepted: number }).results_accepted === 2,
        "2 results stored",
      );
      trainer.cancelGroup(group_id);
      await waitFor(() => groups.length === 1, "the cancelled group");
      expect(groups[0]).toMatchObject({
        status: "cancelled",
        rewards: expect.arrayContaining([1, 1, null]),
        reward_std: 0,
        flat: false,
        replaced_by: null,
        replacement_exhausted: null,
      });
      expect(await counts(cluster)).toEqual({ groups_flat: 0, groups_replaced: 0, replacements_exhausted: 0 });
    },
    T,
  );

  test(
    "a flat group whose completion a crash cut off is judged on restore from its stored rewards and replaced; the replacement survives the next restart",
    async () => {
      cluster = await startCluster({ nodeGraceMs: 5_000 });
      // The first group to reach the node runs at once with rewards 0 (flat); the others are held, rewards 1.
      let first = null as string | null;
      const node = await cluster.node("a", {
        runMs: (a) => ((first ??= a.group_id) === a.group_id ? 5 : null),
        makeResult: (a) => defaultResult(a, a.group_id === first ? 0 : 1),
      });
      const groups: GroupMessage[] = [];
      const trainer = await cluster.trainer("tr", { autoAck: false, onGroup: (g) => void groups.push(g) });
      const submitted = await trainer.submit({ task: TASK, n: 2, agent: AGENT, min_reward_std: 0, replace_flat: { max_replacements: 1 } });
      await waitFor(() => groups.length === 1, "the flat group");
      const replacementId = groups[0]!.replaced_by!;
      expect(replacementId).toMatch(/^grp_/);
      await cluster.coordinator.coordinator.settled();

      // Undo everything the completion wrote, as a crash before that one transaction would leave it.
      await cluster.restart(() => {
        const sqlite = new Database(cluster!.db);
        sqlite.run("update groups set state = 'running', finished_at = null where id = ?", [first]);
        sqlite.run("update group_sampling set reward_std = null, flat = null, replaced_by = null where group_id = ?", [first]);
        sqlite.run("delete from rollouts where group_id = ?", [replacementId]);
        sqlite.run("delete from group_sampling where group_id = ?", [replacementId]);
        sqlite.run("delete from groups where id = ?", [replacementId]);
        sqlite.run("delete from task_stats");
        sqlite.close();
      });
      await node.connect();
      await waitFor(() => groups.length === 2, "the flat group again, judged on restore");
      const again = groups[1]!;
      expect(first).toBe(submitted.group_id);
      expect(again).toMatchObject({ group_id: first, flat: true, reward_std: 0, rewards: [0, 0] });
      expect(again.replaced_by).not.toBe(replacementId);
      const replacement = again.replaced_by!;
      await waitFor(() => node.received.filter((a) => a.group_id === replacement).length === 2, "the new replacement on the node");
      expect(((await (await cluster.admin("/v1/admin/tasks")).json()) as { tasks: unknown[] }).tasks).toMatchObject([
        { task_id: "t-echo", groups: 1, rollouts: 2, flat_groups: 1, pass_rate: 0 },
      ]);

      // The replacement is durable: another restart, and it finishes and is linked back.
      await cluster.coordinator.coordinator.settled();
      await cluster.restart();
      await node.connect();
      node.finishHeld();
      await waitFor(() => groups.some((g) => g.group_id === replacement), "the replacement's group message");
      expect(groups.find((g) => g.group_id === replacement)).toMatchObject({
        replaces: first,
        replacement_index: 1,
        flat: true,
        rewards: [1, 1],
        replacement_exhausted: "max_replacements",
      });
    },
    T,
  );

  test("the spec: next_task needs its list and same_task takes none; the bound is at least 1", () => {
    const base = { task: "t", n: 2, agent: AGENT };
    expect(GroupSpec.safeParse({ ...base, replace_flat: { max_replacements: 1, source: "next_task" } }).success).toBe(false);
    expect(GroupSpec.safeParse({ ...base, replace_flat: { max_replacements: 1, tasks: ["x"] } }).success).toBe(false);
    expect(GroupSpec.safeParse({ ...base, replace_flat: { max_replacements: 0 } }).success).toBe(false);
    expect(GroupSpec.safeParse({ ...base, min_reward_std: -0.1 }).success).toBe(false);
    expect(GroupSpec.parse({ ...base, replace_flat: { max_replacements: 2 } }).replace_flat).toEqual({ max_replacements: 2, source: "same_task" });
  });
});

describe("pass rates", () => {
  test(
    "move as groups finish (decayed by half-life), rank by distance to a target over the trainer stream and the admin API, and survive a restart",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "polar-dyn-"));
      const tasks = join(dir, "tasks.jsonl");
      const row = (id: string) => JSON.stringify({ task_id: id, instruction: id, evaluator: { strategy: "none" } });
      writeFileSync(tasks, ["task-a", "task-b", "task-c"].map(row).join("\n") + "\n");
      // Half-life 1 group: each earlier group of a task weighs half as much as the next.
      cluster = await startCluster({ tasks, passRateHalfLifeGroups: 1 });
      await cluster.node("a", {
        makeResult: rewardsByGroupOrder([
          [1, 1],
          [0, 0],
          [1, 0],
          [1, 1],
        ]),
      });
      const groups: GroupMessage[] = [];
      const trainer = await cluster.trainer("tr", { onGroup: (g) => void groups.push(g) });
      for (const [i, task] of ["task-a", "task-a", "task-b"].entries()) {
        await trainer.submit({ task, n: 2, agent: AGENT });
        await waitFor(() => groups.length === i + 1, `group ${i + 1}`);
      }
      // task-a: W = 0.5·2 + 2 = 3, P = 0.5·2 + 0 = 1 → 1/3. task-b: 1 of 2 → 0.5.
      const ranked = await trainer.taskStats({ target_pass_rate: 0.5 });
      expect(ranked).toMatchObject({ target_pass_rate: 0.5, half_life_groups: 1, unmeasured: ["task-c"] });
      expect(ranked.tasks.map((t) => t.task_id)).toEqual(["task-b", "task-a"]);
      expect(ranked.tasks[0]).toMatchObject({ pass_rate: 0.5, mean_reward: 0.5, weight: 2, groups: 1, rollouts: 2, flat_groups: 0, distance: 0 });
      expect(ranked.tasks[1]).toMatchObject({ groups: 2, rollouts: 4, flat_groups: 2, weight: 3 });
      expect(ranked.tasks[1]!.pass_rate).toBeCloseTo(1 / 3, 12);
      expect(ranked.tasks[1]!.distance).toBeCloseTo(1 / 6, 12);
      const near1 = await trainer.taskStats({ target_pass_rate: 1, limit: 1 });
      expect(near1.tasks.map((t) => t.task_id)).toEqual(["task-b"]);
      const admin = (await (await cluster.admin("/v1/admin/tasks?target_pass_rate=0.5")).json()) as typeof ranked;
      expect(admin).toEqual(ranked);
      const asked = (await (await cluster.admin("/v1/admin/tasks?task_id=task-a&task_id=nope")).json()) as typeof ranked;
      expect({ ids: asked.tasks.map((t) => t.task_id), distance: asked.tasks[0]!.distance, unmeasured: asked.unmeasured }).toEqual({
        ids: ["task-a"],
        distance: null,
        unmeasured: ["nope"],
      });
      expect((await cluster.admin("/v1/admin/tasks?target_pass_rate=2")).status).toBe(400);

      await cluster.coordinator.coordinator.settled();
      await cluster.restart();
      await trainer.ready();
      expect((await (await cluster.admin("/v1/admin/tasks?target_pass_rate=0.5")).json()) as typeof ranked).toEqual(ranked);
      // The next group of task-a builds on the stored sums: W = 0.5·3 + 2 = 3.5, P = 0.5·1 + 2 = 2.5.
      await cluster.node("b", { makeResult: (a) => defaultResult(a, 1) });
      await trainer.submit({ task: "task-a", n: 2, agent: AGENT });
      await waitFor(() => groups.length === 4, "a group after the restart");
      const after = await trainer.taskStats({ task_ids: ["task-a"] });
      expect(after.tasks[0]).toMatchObject({ groups: 3, rollouts: 6, weight: 3.5 });
      expect(after.tasks[0]!.pass_rate).toBeCloseTo(2.5 / 3.5, 12);
      rmSync(dir, { recursive: true, force: true });
    },
    T,
  );
});
