// The coordinator's HTTP surface: Polar's rollout API over the cluster (submit, status, cancel,
// 422 / 409, callbacks), admin endpoints behind the admin token, and Prometheus metrics.
import { afterEach, describe, expect, test } from "bun:test";
import { parsePrometheusText, sampleValue } from "../test/helpers/prometheus-text.ts";
import { AGENT, startCluster, TASK, TOKENS, waitFor, type Cluster } from "../test/support/coordinator/cluster.ts";
import { rolloutFetch } from "../test/helpers/rollout-fetch.ts";

let cluster: Cluster | undefined;
let listener: ReturnType<typeof Bun.serve> | undefined;
afterEach(async () => {
  await cluster?.stop();
  listener?.stop(true);
  cluster = listener = undefined;
});

const T = 60_000;
const submit = (c: Cluster, body: unknown) =>
  rolloutFetch(`${c.coordinator.url}/rollout/task/submit`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("coordinator HTTP", () => {
  test(
    "rollout API: submit, poll to completion, TaskResult delivered to the callback after a retried 503",
    async () => {
      cluster = await startCluster();
      const posts: unknown[] = [];
      let failuresLeft = 1;
      listener = Bun.serve({
        port: 0,
        async fetch(req) {
          if (failuresLeft-- > 0) return new Response("busy", { status: 503 });
          posts.push(await req.json());
          return new Response("ok");
        },
      });
      // Rollouts are held until the duplicate is refused: a 5 ms rollout could finish the task first.
      const node = await cluster.node("a", { runMs: () => null });
      const res = await submit(cluster, {
        ...TASK,
        task_id: "api-1",
        num_samples: 3,
        agent: AGENT,
        callback_url: `http://127.0.0.1:${listener.port}/cb`,
        metadata: { group_id: "g7", policy_version: 2 },
      });
      expect(await res.json()).toEqual({ task_id: "api-1", status: "running" });
      const dup = await submit(cluster, { ...TASK, task_id: "api-1", agent: AGENT });
      expect(dup.status).toBe(409);
      let finished = 0;
      await waitFor(() => (finished += node.finishHeld()) === 3, "3 rollouts assigned and finished");
      let status:
        { status: string; total_sessions: number; completed_sessions: number; results: { status: string; metadata: Record<string, unknown> }[] } | undefined;
      await waitFor(async () => {
        status = (await (await rolloutFetch(`${cluster!.coordinator.url}/rollout/task/api-1`)).json()) as typeof status;
        return status!.status === "completed";
      }, "task completed");
      expect(status!.total_sessions).toBe(3);
      expect(status!.completed_sessions).toBe(3);
      expect(status!.results.every((r) => r.status === "COMPLETED" && r.metadata.group_id === "g7")).toBe(true);
      await waitFor(() => posts.length === 1, "callback delivered", 30_000);
      const body = posts[0] as { task_id: string; status: string; results: unknown[] };
      expect(body.task_id).toBe("api-1");
      expect(body.status).toBe("completed");
      expect(body.results.length).toBe(3);
    },
    T,
  );

  test(
    "rollout API: schema errors are FastAPI 422s naming the field; DELETE cancels, register_if_missing refuses a late submit",
    async () => {
      cluster = await startCluster();
      const bad = await submit(cluster, { task_id: "x", agent: {}, num_samples: 2, early_stop_min_usable_sessions: 3 });
      expect(bad.status).toBe(422);
      const { detail } = (await bad.json()) as { detail: { loc: (string | number)[]; type: string }[] };
      const locs = detail.map((d) => d.loc.join("."));
      expect(locs).toContain("body.instruction");
      expect(locs).toContain("body.agent.harness");
      await submit(cluster, { ...TASK, task_id: "slow", num_samples: 2, agent: AGENT });
      const cancelled = await rolloutFetch(`${cluster.coordinator.url}/rollout/task/slow`, { method: "DELETE" });
      expect(((await cancelled.json()) as { status: string }).status).toBe("cancelled");
      // A cancel keeps only the sessions that had finished: none had.
      const status = (await (await rolloutFetch(`${cluster.coordinator.url}/rollout/task/slow`)).json()) as { status: string; results: unknown[] };
      expect(status).toMatchObject({ status: "cancelled", results: [] });
      expect((await rolloutFetch(`${cluster.coordinator.url}/rollout/task/never`, { method: "DELETE" })).status).toBe(404);
      expect((await rolloutFetch(`${cluster.coordinator.url}/rollout/task/never?register_if_missing=true`, { method: "DELETE" })).status).toBe(200);
      expect((await submit(cluster, { ...TASK, task_id: "never", agent: AGENT })).status).toBe(409);
    },
    T,
  );

  test(
    "admin endpoints need the admin token; nodes, drain, groups, rollouts, stats and metrics report the cluster",
    async () => {
      cluster = await startCluster();
      expect((await fetch(`${cluster.coordinator.url}/v1/admin/nodes`, { headers: { authorization: `Bearer ${TOKENS.trainerToken}` } })).status).toBe(401);
      const node = await cluster.node("a", { imagesWarm: { "polar-busybox:latest": 2 } });
      await submit(cluster, { ...TASK, task_id: "m", num_samples: 2, agent: AGENT });
      await waitFor(async () => ((await (await cluster!.admin("/v1/admin/stats")).json()) as { results_accepted: number }).results_accepted === 2, "2 results");
      const nodes = (await (await cluster.admin("/v1/admin/nodes")).json()) as { nodes: { node_id: string; status: string; images_warm: string[] }[] };
      expect(nodes.nodes).toEqual([expect.objectContaining({ node_id: "a", status: "connected", images_warm: ["polar-busybox:latest"] })]);
      const drained = (await (await cluster.admin("/v1/admin/nodes/a/drain", { method: "POST" })).json()) as { status: string };
      expect(drained.status).toBe("draining");
      await waitFor(() => node.drained, "drain frame");
      const groups = (await (await cluster.admin("/v1/admin/groups")).json()) as { groups: { group_id: string; state: string }[] };
      expect(groups.groups[0]!.state).toBe("completed");
      const rollouts = (await (await cluster.admin("/v1/admin/rollouts?state=COMPLETED")).json()) as { rollouts: unknown[] };
      expect(rollouts.rollouts.length).toBe(2);
      // One spelling of a rollout's state: another is refused, naming the states.
      const misspelt = await cluster.admin("/v1/admin/rollouts?state=completed");
      expect(misspelt.status).toBe(400);
      expect(((await misspelt.json()) as { error: { message: string } }).error.message).toBe(
        'unknown state "completed"; expected one of QUEUED, ASSIGNED, COMPLETED, ERROR, TIMEOUT, CANCELLED',
      );
      expect((await cluster.admin(`/v1/admin/groups/${groups.groups[0]!.group_id}`, { method: "DELETE" })).status).toBe(200);
      expect((await cluster.admin("/v1/admin/groups/nope", { method: "DELETE" })).status).toBe(404);
      let metrics = parsePrometheusText(await (await fetch(`${cluster.coordinator.url}/metrics`)).text());
      await waitFor(async () => {
        metrics = parsePrometheusText(await (await fetch(`${cluster!.coordinator.url}/metrics`)).text());
        return (sampleValue(metrics, "polar_node_gateway_call_duration_seconds_count", { node: "a" }) ?? 0) > 0;
      }, "a heartbeat with gateway latency");
      expect(sampleValue(metrics, "polar_results_accepted_total", { status: "COMPLETED" })).toBe(2);
      expect(sampleValue(metrics, "polar_nodes", { state: "draining" })).toBe(1);
      expect(sampleValue(metrics, "polar_queue_depth")).toBe(0);
    },
    T,
  );
});
