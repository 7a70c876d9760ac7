// Why: the coordinator's HTTP surface in one hono app — health, Polar's rollout API, admin,
// Prometheus metrics and the dashboard — built from parts passed in, opening nothing itself.
import { Hono } from "hono";
import type { CallbackSender } from "../lib/rollout-api/callbacks.ts";
import { adminErrorResponse, asPolarError, describeCause, PolarError } from "../protocol/errors.ts";
import type { CoordinatorConfig } from "./config.ts";
import type { Coordinator } from "./coordinator.ts";
import { adminRoutes } from "./routes/admin.ts";
import { dashboardRoutes } from "../lib/dashboard-routes.ts";
import type { EventFeed } from "../lib/event-feed.ts";
import type { MetricsRegistry } from "../lib/metrics.ts";
import { eventsRoutes, metricsRoutes } from "../lib/observability-routes.ts";
import type { OperatorDeps } from "./routes/admin.ts";
import { presentedToken, tokenMatches } from "./tokens.ts";
import { rolloutApiRoutes } from "./routes/rollout-api.ts";
import type { TaskCatalog } from "./task-catalog.ts";

/** What operators look at: /metrics, /events and the dashboard's admin endpoints. */
export interface CoordinatorObservability {
  metrics: MetricsRegistry;
  feed: EventFeed;
  operator: OperatorDeps;
}

export function createCoordinatorApp(deps: { coordinator: Coordinator; config: CoordinatorConfig; tasks: TaskCatalog; callbacks: CallbackSender; observability: CoordinatorObservability }): Hono {
  const { coordinator, config } = deps;
  const app = new Hono();
  app.get("/health", (c) => c.json({ ok: true, policy_version: coordinator.policyVersion, paused: coordinator.isPaused, nodes: [...coordinator.nodes.values()].filter((n) => n.peer).length }));
  app.route("/", dashboardRoutes());
  // Mount points of their own: a guard (an admin token on /metrics) goes in front with app.use("/metrics", …).
  app.route("/metrics", metricsRoutes(deps.observability.metrics));
  app.route("/events", eventsRoutes(deps.observability.feed, (headers) => tokenMatches(presentedToken(headers), config.adminToken)));
  app.route("/", rolloutApiRoutes(coordinator, deps.tasks, deps.callbacks, config.callbackOnCancel));
  app.route("/v1/admin", adminRoutes(coordinator, config.adminToken, deps.tasks, deps.observability.operator));
  app.notFound((c) => {
    const { body, status } = adminErrorResponse(new PolarError("not_found", `no route ${c.req.method} ${c.req.path}`));
    return c.json(body, status as 404);
  });
  app.onError((err, c) => {
    const e = asPolarError(err);
    if (e.code === "internal") console.error(JSON.stringify({ ts: new Date().toISOString(), level: "error", event: "http.failed", method: c.req.method, path: c.req.path, cause: describeCause(e.cause) }));
    const { body, status } = adminErrorResponse(e);
    return c.json(body, status as 500);
  });
  return app;
}
