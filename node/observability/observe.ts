// Why: everything an operator observes on a node — /metrics, /events, the dashboard page and its
// admin endpoints — attached to the node's events and mounted on its app in one place, so
// main.ts only hands over its parts.
import { Hono } from "hono";
import { dashboardRoutes } from "../../lib/dashboard-routes.ts";
import type { EventBus } from "../../lib/events.ts";
import type { MetricsRegistry } from "../../lib/metrics.ts";
import { eventsRoutes, metricsRoutes } from "../../lib/observability-routes.ts";
import { adminErrorResponse, PolarError } from "../../protocol/errors.ts";
import type { NodeEvents } from "../events.ts";
import { isAdminToken, presentedKey } from "../gateway/auth.ts";
import type { PolicyGate } from "../gateway/policy-gate.ts";
import type { Pipeline } from "../pipeline/pipeline.ts";
import type { Pool } from "../runtime/pool.ts";
import { CallsRepo } from "../store/calls-repo.ts";
import type { NodeDb } from "../store/db.ts";
import type { RolloutsRepo } from "../store/rollouts-repo.ts";
import { nodeDashboard, type NodeDashboard } from "./dashboard-view.ts";
import { nodeEventFeed } from "./event-feed.ts";
import { nodeMetrics } from "./metrics.ts";

export interface NodeObservabilityDeps {
  nodeId: string;
  adminToken: string;
  workers: { init: number; run: number; postrun: number };
  engines: string[];
  events: EventBus<NodeEvents>;
  pipeline: Pipeline;
  pool: Pool;
  gate: PolicyGate;
  db: NodeDb;
  rollouts: RolloutsRepo;
  linkStatus(): string;
  /** `/events` heartbeat (default 15 s). */
  heartbeatMs?: number;
}

export interface NodeObservability {
  metrics: MetricsRegistry;
  dashboard: NodeDashboard;
  /** `/`, `/dashboard/*`, `/metrics`, `/events` and the dashboard's `/v1/admin/*` endpoints. */
  routes: Hono;
  stop(): void;
}

export function observeNode(d: NodeObservabilityDeps): NodeObservability {
  const metrics = nodeMetrics(d);
  const feed = nodeEventFeed(d.events, d.heartbeatMs === undefined ? {} : { heartbeatMs: d.heartbeatMs });
  const dashboard = nodeDashboard({ ...d, feed, calls: new CallsRepo(d.db, 16) });
  const admitted = (headers: Headers) => isAdminToken(presentedKey(headers), d.adminToken);
  const refused = () => {
    const { body, status } = adminErrorResponse(new PolarError("unauthorized", "the admin token is required"));
    return Response.json(body, { status });
  };
  const notFound = (what: string) => {
    const { body, status } = adminErrorResponse(new PolarError("not_found", `no ${what}`));
    return Response.json(body, { status });
  };

  const routes = new Hono();
  routes.route("/", dashboardRoutes());
  // Mount points of their own: a guard in front of /metrics goes with routes.use("/metrics", …).
  routes.route("/metrics", metricsRoutes(metrics));
  routes.route("/events", eventsRoutes(feed, admitted));
  routes.get("/v1/admin/dashboard", (c) => (admitted(c.req.raw.headers) ? c.json(dashboard.snapshot()) : refused()));
  routes.get("/v1/admin/tasks/:id", async (c) => {
    if (!admitted(c.req.raw.headers)) return refused();
    const task = await dashboard.task(c.req.param("id"));
    return task ? c.json(task) : notFound(`task ${c.req.param("id")}`);
  });
  routes.get("/v1/admin/rollouts/:id", async (c) => {
    if (!admitted(c.req.raw.headers)) return refused();
    const rollout = await dashboard.rollout(c.req.param("id"));
    return rollout ? c.json(rollout) : notFound(`rollout ${c.req.param("id")}`);
  });
  return { metrics, dashboard, routes, stop: () => dashboard.stop() };
}
