// What operators see on the coordinator, over real sockets with simulated nodes: /metrics parsed
// as Prometheus text with counters that move as rollouts run, /events in NVIDIA Polar's frames and
// order, the dashboard snapshot and drill-down, and the pause lever.
import { afterEach, describe, expect, test } from "bun:test";
import { readFeed, type ParsedFrame } from "../lib/event-feed.ts";
import { DashboardSnapshot, GroupDetail, RolloutDetail } from "../protocol/admin.ts";
import { parsePrometheusText, sampleSum, sampleValue } from "../test/helpers/prometheus-text.ts";
import { defaultResult } from "../test/support/coordinator/simulated-node.ts";
import { startCluster, TASK, TOKENS, waitFor, type Cluster } from "../test/support/coordinator/cluster.ts";

let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

const T = 60_000;
const scrape = async (c: Cluster) => parsePrometheusText(await (await fetch(`${c.coordinator.url}/metrics`)).text());

/** Reads /events into `frames` until aborted. */
function follow(
  c: Cluster,
  frames: ParsedFrame[],
  headers: Record<string, string> = { authorization: `Bearer ${TOKENS.adminToken}` },
): { stop: () => void; opened: Promise<Response> } {
  const abort = new AbortController();
  const opened = fetch(`${c.coordinator.url}/events`, { headers, signal: abort.signal });
  void opened.then((res) => (res.ok ? readFeed(res.body!, (f) => void frames.push(f)) : undefined)).catch(() => undefined);
  return { stop: () => abort.abort(), opened };
}

describe("coordinator observability", () => {
  test(
    "/metrics: valid exposition text whose counters and histograms move as a group runs",
    async () => {
      cluster = await startCluster();
      const before = await scrape(cluster);
      expect(sampleValue(before, "polar_queue_depth")).toBe(0);
      expect(sampleSum(before, "polar_dispatched_total")).toBe(0);
      expect(before.get("polar_rollout_stage_duration_seconds")!.type).toBe("histogram");

      let n = 0;
      await cluster.node("a", { imagesWarm: { "polar-busybox:latest": 2 }, makeResult: (a) => defaultResult(a, n++ % 2, 8) });
      const results: unknown[] = [];
      const trainer = await cluster.trainer("t1", { onResult: (r) => void results.push(r) });
      await trainer.submit({ task: TASK, n: 4, agent: { harness: "mini" } });
      await waitFor(() => results.length === 4, "4 results");

      let after = await scrape(cluster);
      await waitFor(async () => {
        after = await scrape(cluster!);
        return (
          (sampleValue(after, "polar_results_acked_total", { trainer: "t1" }) ?? 0) === 4 &&
          sampleValue(after, "polar_node_warm_sandboxes", { node: "a", image: "polar-busybox:latest" }) === 2
        );
      }, "acks and a heartbeat counted");
      expect(sampleSum(after, "polar_dispatched_total")).toBe(4);
      expect(sampleValue(after, "polar_results_accepted_total", { status: "COMPLETED" })).toBe(4);
      expect(sampleValue(after, "polar_rollouts_finished_total", { state: "COMPLETED" })).toBe(4);
      expect(sampleValue(after, "polar_rollouts", { state: "QUEUED" })).toBe(0);
      expect(sampleValue(after, "polar_rollouts", { state: "ASSIGNED" })).toBe(0);
      expect(sampleValue(after, "polar_groups_finished_total", { status: "completed" })).toBe(1);
      expect(sampleValue(after, "polar_results_streamed_total", { trainer: "t1" })).toBe(4);
      expect(sampleValue(after, "polar_results_streamed_bytes_total", { trainer: "t1" })!).toBeGreaterThan(4 * 100);
      // Each simulated result has one trace of 8 prompt + 8 response tokens, all trainable; its timing init 1 ms, run 2 ms.
      expect(sampleValue(after, "polar_result_tokens_total", { part: "prompt" })).toBe(32);
      expect(sampleValue(after, "polar_result_tokens_total", { part: "trainable" })).toBe(32);
      expect(sampleValue(after, "polar_rollout_stage_duration_seconds_count", { stage: "run" })).toBe(4);
      expect(sampleValue(after, "polar_rollout_stage_duration_seconds_sum", { stage: "run" })).toBeCloseTo(0.008, 6);
      expect(sampleValue(after, "polar_rollout_stage_duration_seconds_count", { stage: "queue" })).toBe(4);
      expect(sampleValue(after, "polar_result_staleness_versions_count")).toBe(4);
      expect(sampleValue(after, "polar_result_staleness_versions_bucket", { le: "0" })).toBe(4);
      expect(sampleValue(after, "polar_trainer_unacked", { trainer: "t1" })).toBe(0);
      expect(sampleValue(after, "polar_nodes", { state: "connected" })).toBe(1);
      expect(sampleValue(after, "polar_node_slots", { node: "a" })).toBeGreaterThan(0);
      expect(sampleValue(after, "polar_nodes_joined_total", { reconnect: "false" })).toBe(1);
      expect(sampleSum(after, "polar_rollout_failures_total")).toBe(0);

      trainer.policy(3);
      await waitFor(async () => sampleValue(await scrape(cluster!), "polar_policy_version") === 3, "policy version 3");
      expect(sampleValue(await scrape(cluster), "polar_policy_version_advances_total")).toBe(1);
    },
    T,
  );

  test(
    "/events: the admin token, then hello and NVIDIA's events in order for a rollout, with Polar's own",
    async () => {
      cluster = await startCluster();
      const denied = await follow(cluster, [], {}).opened;
      expect(denied.status).toBe(401);
      const frames: ParsedFrame[] = [];
      const feed = follow(cluster, frames);
      await waitFor(() => frames.length >= 1, "hello");
      expect(frames[0]!.type).toBe("hello");
      expect(typeof frames[0]!.ts).toBe("string");
      await cluster.node("a");
      const trainer = await cluster.trainer("t1");
      const { rollout_ids } = await trainer.submit({ task: TASK, n: 2, agent: { harness: "mini" } });
      await waitFor(() => frames.some((f) => f.type === "group.summary"), "the group's summary");
      feed.stop();

      const types = frames.map((f) => f.type);
      expect(types).toContain("node.joined");
      const created = frames.findIndex((f) => f.type === "task.created");
      const completed = frames.findIndex((f) => f.type === "task.completed");
      expect(created).toBeGreaterThan(types.indexOf("node.joined"));
      expect(frames[created]!.data).toMatchObject({ task_id: TASK.task_id, status: "running", harness: "mini", num_samples: 2, session_ids: rollout_ids });
      expect(frames[completed]!.data).toMatchObject({ task_id: TASK.task_id, status: "completed", completed_sessions: 2 });
      for (const id of rollout_ids) {
        const statuses = frames.filter((f) => f.type === "session.state_changed" && f.data.session_id === id).map((f) => f.data.status);
        expect(statuses[0]).toBe("QUEUED");
        expect(statuses[1]).toBe("REGISTERED");
        expect(statuses.at(-1)).toBe("COMPLETED");
        const done = frames.findIndex((f) => f.type === "session.state_changed" && f.data.session_id === id && f.data.status === "COMPLETED");
        expect(done).toBeGreaterThan(created);
        expect(done).toBeLessThan(completed);
        const result = frames.find((f) => f.type === "rollout.result" && f.data.rollout_id === id)!;
        expect(result.data).toMatchObject({ task_id: TASK.task_id, status: "COMPLETED", reward: 1, failure_kind: "none", staleness: 0 });
      }
      const updates = frames.filter((f) => f.type === "task.updated").map((f) => f.data.completed_sessions);
      expect(updates).toEqual([1, 2]);
      const summary = frames.find((f) => f.type === "group.summary")!.data;
      expect(summary).toMatchObject({ task_id: TASK.task_id, rewards: [1, 1], mean_reward: 1, reward_std: 0 });
      // Ids increase by one: a reader can resume with Last-Event-ID.
      const ids = frames.slice(1).map((f) => f.id!);
      expect(ids).toEqual(ids.map((_, i) => ids[0]! + i));

      // Reconnecting with Last-Event-ID replays what came after it.
      const replay: ParsedFrame[] = [];
      const again = follow(cluster, replay, { authorization: `Bearer ${TOKENS.adminToken}`, "last-event-id": String(frames[completed]!.id) });
      await waitFor(() => replay.some((f) => f.type === "group.summary"), "replayed frames");
      again.stop();
      expect(replay[0]!.type).toBe("hello");
      expect(replay[1]!.id).toBe(frames[completed]!.id! + 1);
    },
    T,
  );

  test(
    "dashboard snapshot and drill-down: group → rollouts → one rollout's stages and stored trajectory; pause and resume",
    async () => {
      cluster = await startCluster();
      await cluster.node("a", {
        imagesWarm: { "polar-busybox:latest": 1 },
        makeResult: (a) => ({
          ...defaultResult(a, 1, 4),
          polar_transcript: [
            { role: "user", content: "say hi", truncated: false },
            { role: "assistant", content: "hi", truncated: false },
          ],
        }),
      });
      const trainer = await cluster.trainer("t1");
      const { group_id, rollout_ids } = await trainer.submit({ task: TASK, n: 3, agent: { harness: "mini" } });
      let snap = DashboardSnapshot.parse(await (await cluster.admin("/v1/admin/dashboard")).json());
      await waitFor(async () => {
        snap = DashboardSnapshot.parse(await (await cluster!.admin("/v1/admin/dashboard")).json());
        return snap.groups.length === 1 && snap.nodes[0]!.warm_sandboxes["polar-busybox:latest"] === 1;
      }, "the group summarised and a heartbeat");
      expect(snap.service).toBe("coordinator");
      expect(snap.results.map((r) => r.rollout_id).sort()).toEqual([...rollout_ids].sort());
      expect(snap.queue.COMPLETED).toBe(3);
      expect(snap.nodes[0]).toMatchObject({ node_id: "a", status: "connected", used: 0 });
      expect(snap.trainers).toEqual([expect.objectContaining({ trainer_id: "t1", connected: true })]);
      expect(snap.groups[0]).toMatchObject({ group_id, mean_reward: 1, reward_std: 0 });

      const group = GroupDetail.parse(await (await cluster.admin(`/v1/admin/groups/${group_id}`)).json());
      expect(group.rollouts.map((r) => r.rollout_id)).toEqual(rollout_ids);
      expect(group.rollouts.every((r) => r.status === "COMPLETED" && r.reward === 1 && r.node_id === "a")).toBe(true);
      const detail = RolloutDetail.parse(await (await cluster.admin(`/v1/admin/rollouts/${rollout_ids[0]}`)).json());
      expect(detail.timeline.map((s) => s.state)).toEqual(["QUEUED", "ASSIGNED", "COMPLETED"]);
      // A SessionTiming has every stage (0 where nothing was measured), as a real node reports it.
      expect(detail.stages.filter((s) => s.duration_ms > 0)).toEqual([
        expect.objectContaining({ stage: "init", start_ms: 0, duration_ms: 1 }),
        expect.objectContaining({ stage: "run", start_ms: 1, duration_ms: 2 }),
      ]);
      const traces = (detail.result!.trajectory as { traces: { response_ids: number[]; loss_mask: number[] }[] }).traces;
      expect(traces[0]!.response_ids.length).toBe(4);
      expect(detail.messages).toEqual([
        { role: "user", content: "say hi", truncated: false },
        { role: "assistant", content: "hi", truncated: false },
      ]);
      expect((await cluster.admin("/v1/admin/rollouts/ro_nope")).status).toBe(404);
      // The transcript stays at the coordinator: trainers never get it.
      expect(JSON.stringify(snap.results)).not.toContain("say hi");

      const paused = (await (await cluster.admin("/v1/admin/pause", { method: "POST" })).json()) as { nodes: number; paused: boolean };
      expect(paused).toMatchObject({ nodes: 1, paused: true });
      const resumed = (await (await cluster.admin("/v1/admin/resume", { method: "POST", body: JSON.stringify({ policy_version: 2 }) })).json()) as {
        policy_version: number;
        paused: boolean;
      };
      expect(resumed).toEqual({ policy_version: 2, paused: false });
      expect((await cluster.admin("/v1/admin/resume", { method: "POST", body: JSON.stringify({ policy_version: 1 }) })).status).toBe(409);
      expect((await fetch(`${cluster.coordinator.url}/v1/admin/pause`, { method: "POST" })).status).toBe(401);
    },
    T,
  );

  test(
    "the dashboard page and its assets are served; nothing else under /dashboard/",
    async () => {
      cluster = await startCluster();
      const page = await fetch(`${cluster.coordinator.url}/`);
      expect(page.headers.get("content-type")).toContain("text/html");
      const html = await page.text();
      for (const asset of ["/dashboard/app.js", "/dashboard/vendor/uPlot.iife.min.js", "/dashboard/style.css"]) {
        expect(html).toContain(asset);
        expect((await fetch(`${cluster.coordinator.url}${asset}`)).status).toBe(200);
      }
      expect((await fetch(`${cluster.coordinator.url}/dashboard/../package.json`)).status).toBe(404);
      expect((await fetch(`${cluster.coordinator.url}/dashboard/index.html.bak`)).status).toBe(404);
    },
    T,
  );
});
