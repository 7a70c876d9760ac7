// Why: the operator's view and levers — nodes (and draining one), forgetting a node's or trainer's
// identity, groups, rollouts by state, deleting a group, per-task pass rates, headline stats —
// behind the admin token.
import { Hono, type Context } from "hono";
import { readLimitedText } from "../../lib/http-body.ts";
import { ResumeBody } from "../../protocol/admin.ts";
import type { TaskCatalog } from "../../lib/task-catalog.ts";
import { adminErrorResponse, PolarError } from "../../protocol/errors.ts";
import { TaskStatsQuery } from "../../protocol/task-stats.ts";
import type { Coordinator } from "../coordinator.ts";
import type { CoordinatorDashboard } from "../dashboard-view.ts";
import { slots } from "../node-states.ts";
import { isRolloutStateName, ROLLOUT_STATES } from "../rollout-states.ts";
import { tokenMatches, presentedToken } from "../../lib/tokens.ts";

const LIST_LIMIT = 1000;

/** What the dashboard's endpoints and the operator's pause need besides the coordinator. */
export interface OperatorDeps {
  dashboard: CoordinatorDashboard;
  /** Pauses the cluster; resolves with the request id and how many nodes drained. */
  pause(): Promise<{ request_id: string; nodes: number }>;
}

export function adminRoutes(coordinator: Coordinator, adminToken: string, tasks?: TaskCatalog, operator?: OperatorDeps): Hono {
  const app = new Hono();
  app.use("*", async (c, next) => {
    if (!tokenMatches(presentedToken(c.req.raw.headers), adminToken)) return failed(c, new PolarError("unauthorized", "admin token required"));
    await next();
  });

  app.get("/nodes", (c) =>
    c.json({
      nodes: [...coordinator.nodes.values()].map((n) => ({
        node_id: n.id,
        status: n.state,
        version: n.info?.version ?? null,
        capacity: n.capacity,
        slots: slots(n.capacity),
        assigned: n.assigned.size,
        load: n.load,
        harnesses: n.info?.harnesses ?? [],
        engines: n.info?.engines ?? [],
        images_warm: [...n.warm],
        last_seen: new Date(n.lastSeen).toISOString(),
        gateway_calls: n.gatewayCalls,
        gateway_mean_ms: n.gatewayCalls > 0 ? n.gatewayTotalMs / n.gatewayCalls : null,
      })),
    }),
  );

  app.post("/nodes/:id/drain", (c) => {
    const node = coordinator.drainNode(c.req.param("id"));
    if (!node) return failed(c, new PolarError("not_found", `no node ${c.req.param("id")}`));
    return c.json({ node_id: node.id, status: node.state, assigned: node.assigned.size });
  });

  // A node or trainer whose kept secret was lost (its store wiped): its next hello registers it afresh.
  for (const kind of ["node", "trainer"] as const) {
    app.delete(`/${kind}s/:id/identity`, async (c) => {
      const id = c.req.param("id");
      if (!(await coordinator.identities.forget(kind, id))) return failed(c, new PolarError("not_found", `no ${kind} ${id} is registered`));
      return c.json({ [`${kind}_id`]: id, identity: "forgotten" });
    });
  }

  app.get("/groups", async (c) => {
    const rows = await coordinator.repo.listGroups(LIST_LIMIT);
    return c.json({
      groups: rows.map((g) => {
        const live = coordinator.groups.get(g.id);
        return {
          group_id: g.id,
          task_id: g.taskId,
          trainer_id: g.trainerId,
          n: g.n,
          state: g.state,
          finished: live ? live.outcomes.size : null,
          created_at: new Date(g.createdAt).toISOString(),
        };
      }),
    });
  });

  app.delete("/groups/:id", async (c) => {
    const deleted = await coordinator.deleteGroup(c.req.param("id"));
    if (!deleted) return failed(c, new PolarError("not_found", `no group ${c.req.param("id")}`));
    return c.json({ group_id: c.req.param("id"), deleted: true });
  });

  app.get("/rollouts", async (c) => {
    const state = c.req.query("state");
    if (state !== undefined && !isRolloutStateName(state))
      return failed(c, new PolarError("bad_request", `unknown state "${state}"; expected one of ${ROLLOUT_STATES.join(", ")}`));
    const rows = await coordinator.repo.listRollouts(state, LIST_LIMIT);
    return c.json({
      rollouts: rows.map((r) => ({
        rollout_id: r.id,
        group_id: r.groupId,
        state: r.state,
        stage: coordinator.active.get(r.id)?.stage ?? null,
        node_id: r.nodeId,
        attempt: r.attempt,
        priority: r.priority,
        image: r.image,
        cause: r.cause,
      })),
    });
  });

  // ?task_id=a&task_id=b&target_pass_rate=0.5&limit=100 — TaskStatsQuery in query-string form.
  app.get("/tasks", (c) => {
    const number = (name: string) => (c.req.query(name) === undefined ? undefined : Number(c.req.query(name)));
    const ids = c.req.queries("task_id");
    const query = TaskStatsQuery.safeParse({ task_ids: ids, target_pass_rate: number("target_pass_rate"), limit: number("limit") });
    if (!query.success) return failed(c, new PolarError("bad_request", query.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")));
    return c.json(coordinator.taskStats.query(query.data, () => tasks?.ids() ?? []));
  });

  app.get("/stats", async (c) => c.json(await stats(coordinator)));

  if (operator) {
    app.get("/dashboard", async (c) => c.json(await operator.dashboard.snapshot()));
    app.get("/groups/:id", async (c) => {
      const group = await operator.dashboard.group(c.req.param("id"));
      return group ? c.json(group) : failed(c, new PolarError("not_found", `no group ${c.req.param("id")}`));
    });
    app.get("/rollouts/:id", async (c) => {
      const rollout = await operator.dashboard.rollout(c.req.param("id"), c.req.query("group"));
      return rollout
        ? c.json(rollout)
        : failed(c, new PolarError("not_found", `no rollout ${c.req.param("id")} (a finished one not seen recently needs ?group=)`));
    });
    app.post("/pause", async (c) => c.json({ ...(await operator.pause()), paused: coordinator.isPaused }));
    app.post("/resume", async (c) => {
      const text = await readLimitedText(c.req.raw, 64 * 1024);
      let json: unknown = {};
      try {
        json = text ? JSON.parse(text) : {};
      } catch {
        return failed(c, new PolarError("bad_request", "the body is not JSON"));
      }
      const parsed = ResumeBody.safeParse(json);
      if (text === null || !parsed.success)
        return failed(c, new PolarError("bad_request", text === null ? "body too large" : "expected {policy_version?: non-negative integer}"));
      const body = parsed.data;
      await coordinator.resume(body.policy_version ?? coordinator.policyVersion);
      return c.json({ policy_version: coordinator.policyVersion, paused: coordinator.isPaused });
    });
  }
  return app;
}

export async function stats(coordinator: Coordinator) {
  const nodes = [...coordinator.nodes.values()];
  const { stage_ms, ...counters } = coordinator.counters;
  return {
    queue_depth: coordinator.queue.size,
    rollouts_by_state: await coordinator.repo.countRolloutsByState(),
    groups_running: coordinator.groups.size,
    nodes: {
      connected: nodes.filter((n) => n.state === "connected").length,
      draining: nodes.filter((n) => n.state === "draining").length,
      disconnected: nodes.filter((n) => n.state === "disconnected").length,
    },
    policy_version: coordinator.policyVersion,
    paused: coordinator.isPaused,
    ...counters,
    memory: { rss_bytes: process.memoryUsage().rss, heap_used_bytes: process.memoryUsage().heapUsed, result_cache_bytes: coordinator.cache.heldBytes },
    stage_mean_ms: Object.fromEntries(Object.entries(stage_ms).map(([k, v]) => [k, v.sum / v.count])),
  };
}

function failed(c: Context, err: PolarError): Response {
  const { body, status } = adminErrorResponse(err);
  return c.json(body, status as 404);
}
