// Restarts on either side, over real WebSockets and a real SQLite file: a node restarted within
// its grace reports what it ran as interrupted and those rollouts run again (attempt counted); a
// coordinator restarted after a group's last result was stored completes the group; a throwing
// event listener fails nothing; and the structured log says what happened.
import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import type { StreamedResult } from "../protocol/trainer-stream.ts";
import { AGENT, startCluster, TASK, waitFor, type Cluster } from "../test/support/coordinator/cluster.ts";
import { rolloutFetch } from "../test/helpers/rollout-fetch.ts";

let cluster: Cluster | undefined;
let listener: ReturnType<typeof Bun.serve> | undefined;
afterEach(async () => {
  await cluster?.stop();
  listener?.stop(true);
  cluster = listener = undefined;
});

const T = 60_000;
const stats = async (c: Cluster) => (await (await c.admin("/v1/admin/stats")).json()) as { requeued: number; nodes_lost: number; results_accepted: number };
const logged = (c: Cluster, event: string) => c.logs.filter((l) => l.event === event);

/** Puts a finished group back the way a crash between its last stored result and its completion leaves it. */
function undoCompletion(db: string, groupId: string): void {
  const sqlite = new Database(db);
  sqlite.run("update groups set state = 'running', finished_at = null where id = ?", [groupId]);
  sqlite.close();
}

describe("node restarted within the grace", () => {
  test(
    "its interrupted rollouts are queued again with the attempt counted and completed; none is delivered as ERROR",
    async () => {
      cluster = await startCluster({ nodeGraceMs: 30_000 });
      // The first attempt never finishes (it dies with the node); later attempts finish at once.
      const node = await cluster.node("n", { runMs: (a) => (a.attempt === 1 ? null : 5) });
      const results: StreamedResult[] = [];
      const trainer = await cluster.trainer("tr", { onResult: (r) => void results.push(r) });
      const { rollout_ids } = await trainer.submit({ task: TASK, n: 3, agent: AGENT });
      await waitFor(() => node.received.length === 3, "the node runs all 3");
      node.restart();
      await node.connect();
      await waitFor(() => results.length === 3, "3 results after the restart");
      expect(new Set(results.map((r) => r.rollout_id))).toEqual(new Set(rollout_ids));
      expect(results.map((r) => r.status)).toEqual(["COMPLETED", "COMPLETED", "COMPLETED"]);
      expect(node.received.map((a) => a.attempt).sort()).toEqual([1, 1, 1, 2, 2, 2]);
      expect(await stats(cluster)).toMatchObject({ requeued: 3, nodes_lost: 0, results_accepted: 3 });
      const requeued = logged(cluster, "rollouts.requeued");
      expect(requeued).toEqual([expect.objectContaining({ level: "warn", node_id: "n", cause: "node n restarted (node_restarted)", rollouts: 3 })]);
      expect(logged(cluster, "node.reconnected")).toEqual([expect.objectContaining({ node_id: "n", kept: 0, released: 3 })]);
      expect(trainer.counts.duplicates).toBe(0);
    },
    T,
  );

  test(
    "interrupted on its last allowed attempt, a rollout ends as a masked ERROR naming why",
    async () => {
      cluster = await startCluster({ nodeGraceMs: 30_000, maxAttempts: 2 });
      const node = await cluster.node("n", { runMs: () => null });
      const results: StreamedResult[] = [];
      const trainer = await cluster.trainer("tr", { onResult: (r) => void results.push(r) });
      await trainer.submit({ task: TASK, n: 1, agent: AGENT });
      await waitFor(() => node.received.length === 1, "first attempt");
      node.restart();
      await node.connect();
      await waitFor(() => node.received.length === 2, "second attempt");
      expect(results).toEqual([]);
      node.restart();
      await node.connect();
      await waitFor(() => results.length === 1, "the failed result");
      expect(results[0]!.status).toBe("ERROR");
      expect(results[0]!.error).toBe("node n restarted (node_restarted); no attempts left (2)");
      expect(results[0]!.traces).toEqual([]);
      expect(logged(cluster, "rollout.attempts_exhausted")).toEqual([expect.objectContaining({ node_id: "n", attempt: 2 })]);
    },
    T,
  );
});

describe("coordinator restarted after a group's last result was stored", () => {
  test(
    "a trainer's group completes on restore and its group message reaches the trainer",
    async () => {
      cluster = await startCluster();
      await cluster.node("a");
      const results: StreamedResult[] = [];
      const groups: { group_id: string; status: string; rewards: (number | null)[] }[] = [];
      const trainer = await cluster.trainer("tr", { autoAck: false, onResult: (r) => void results.push(r), onGroup: (g) => void groups.push(g) });
      const { group_id } = await trainer.submit({ task: TASK, n: 2, agent: AGENT });
      await waitFor(() => results.length === 2 && groups.length === 1, "2 results and the group");
      await cluster.coordinator.coordinator.settled();
      await cluster.restart(() => undoCompletion(cluster!.db, group_id));
      await waitFor(() => groups.length === 2, "the group message after the restart");
      expect(groups[1]).toMatchObject({ group_id, status: "completed", rewards: [1, 1] });
      const listed = (await (await cluster.admin("/v1/admin/groups")).json()) as { groups: { group_id: string; state: string }[] };
      expect(listed.groups.find((g) => g.group_id === group_id)!.state).toBe("completed");
      expect(logged(cluster, "coordinator.restored").at(-1)).toMatchObject({ groups: 1, groups_completed: 1, queued: 0 });
    },
    T,
  );

  test(
    "a rollout API task completes on restore and its callback is delivered",
    async () => {
      const posts: { task_id: string; status: string; results: unknown[] }[] = [];
      listener = Bun.serve({ port: 0, fetch: async (req) => (posts.push((await req.json()) as (typeof posts)[number]), new Response("ok")) });
      cluster = await startCluster();
      await cluster.node("a");
      const submit = await rolloutFetch(`${cluster.coordinator.url}/rollout/task/submit`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...TASK, task_id: "api-r", num_samples: 2, agent: AGENT, callback_url: `http://127.0.0.1:${listener.port}/cb` }),
      });
      expect(submit.status).toBe(200);
      await waitFor(() => posts.length === 1, "the first callback");
      await cluster.coordinator.coordinator.settled();
      const sqlite = new Database(cluster.db);
      const { id } = sqlite.query("select id from groups where task_id = 'api-r'").get() as { id: string };
      sqlite.close();
      await cluster.restart(() => undoCompletion(cluster!.db, id));
      await waitFor(() => posts.length === 2, "the callback after the restart", 30_000);
      expect(posts[1]).toMatchObject({ task_id: "api-r", status: "completed" });
      expect(posts[1]!.results).toHaveLength(2);
      const status = (await (await rolloutFetch(`${cluster.coordinator.url}/rollout/task/api-r`)).json()) as { status: string; completed_sessions: number };
      expect(status).toMatchObject({ status: "completed", completed_sessions: 2 });
    },
    T,
  );
});

describe("event listeners", () => {
  test(
    "a throwing listener does not fail a transition: the group runs to the end and the error is reported",
    async () => {
      const failures: string[] = [];
      cluster = await startCluster({}, { onListenerError: (event) => void failures.push(event) });
      const events = cluster.coordinator.coordinator.events;
      for (const name of ["rollout.state_changed", "rollout.dispatched", "result.accepted", "group.finished"] as const) {
        events.on(name, () => {
          throw new Error("observer bug");
        });
      }
      await cluster.node("a");
      const results: StreamedResult[] = [];
      const groups: unknown[] = [];
      const trainer = await cluster.trainer("tr", { onResult: (r) => void results.push(r), onGroup: (g) => void groups.push(g) });
      await trainer.submit({ task: TASK, n: 3, agent: AGENT });
      await waitFor(() => results.length === 3 && groups.length === 1, "3 results and the group");
      expect(results.every((r) => r.status === "COMPLETED")).toBe(true);
      // 3 × (entered, assigned, completed) moves, 3 dispatches, 3 results, 1 group.
      expect(failures.filter((e) => e === "rollout.state_changed")).toHaveLength(9);
      expect(new Set(failures)).toEqual(new Set(["rollout.state_changed", "rollout.dispatched", "result.accepted", "group.finished"]));
      expect((await stats(cluster)).results_accepted).toBe(3);
    },
    T,
  );
});

describe("structured log", () => {
  test(
    "joins, reconnects, losses, requeues, pauses, version changes and restores are one parsed JSON line each",
    async () => {
      cluster = await startCluster({ nodeGraceMs: 200 });
      const a = await cluster.node("a", { runMs: () => null });
      const trainer = await cluster.trainer("tr");
      await trainer.submit({ task: TASK, n: 2, agent: AGENT });
      await waitFor(() => a.received.length === 2, "a holds both");
      a.disconnect();
      await a.connect();
      a.kill();
      await waitFor(() => logged(cluster!, "node.lost").length === 1, "a lost");
      await trainer.pause();
      await trainer.resume(4);
      await waitFor(() => logged(cluster!, "cluster.resumed").length === 1, "resumed");
      await cluster.restart();
      await waitFor(() => logged(cluster!, "coordinator.restored").length === 2, "the second life's restore line");
      const events = cluster.logs.map((l) => l.event);
      for (const e of [
        "node.joined",
        "node.disconnected",
        "node.reconnected",
        "node.lost",
        "rollouts.requeued",
        "cluster.pause_requested",
        "cluster.paused",
        "policy.version_advanced",
        "cluster.resumed",
        "coordinator.restored",
      ])
        expect(events).toContain(e);
      expect(logged(cluster, "node.lost")[0]).toMatchObject({ level: "warn", node_id: "a", rollouts: 2 });
      expect(logged(cluster, "rollouts.requeued")[0]).toMatchObject({ node_id: "a", cause: "node a lost", rollouts: 2 });
      expect(logged(cluster, "policy.version_advanced")[0]).toMatchObject({ from: 0, to: 4 });
      expect(logged(cluster, "coordinator.restored")[1]).toMatchObject({ policy_version: 4, groups: 1, queued: 2 });
      for (const line of cluster.logs) expect(typeof line.ts === "string" && !Number.isNaN(Date.parse(line.ts as string))).toBe(true);
    },
    T,
  );
});
