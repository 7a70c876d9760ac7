// Why: the coordinator's HTTP surface in one hono app — health, Polar's rollout API, admin,
// Prometheus metrics and the dashboard — built from parts passed in, opening nothing itself.
import { Hono, type Context } from "hono";
import type { RolloutApiAccess } from "../lib/rollout-api/access.ts";
import type { CallbackSender } from "../lib/rollout-api/callbacks.ts";
import type { CoordinatorHealth } from "../protocol/admin.ts";
import { adminErrorResponse, asPolarError, describeCause, PolarError } from "../protocol/errors.ts";
import type { CoordinatorConfig } from "./config.ts";
import type { Coordinator } from "./coordinator.ts";
import { adminRoutes } from "./routes/admin.ts";
import { dashboardRoutes } from "../lib/dashboard-routes.ts";
import type { EventFeed } from "../lib/event-feed.ts";
import type { MetricsRegistry } from "../lib/metrics.ts";
import { eventsRoutes, metricsRoutes } from "../lib/observability-routes.ts";
import type { OperatorDeps } from "./routes/admin.ts";
import { presentedToken, tokenMatches } from "../lib/tokens.ts";
import { rolloutApiRoutes } from "./routes/rollout-api.ts";
import type { TaskCatalog } from "./task-catalog.ts";

/** What operators look at: /metrics, /events and the dashboard's admin endpoints. */
export interface CoordinatorObservability {
  metrics: MetricsRegistry;
  feed: EventFeed;
  operator: OperatorDeps;
}

/** The rollout API's gate: open (loopback only, checked by the config), or the rollout or admin token; node and trainer tokens are other roles'. */
export function coordinatorRolloutAccess(config: CoordinatorConfig): RolloutApiAccess {
  if (config.openRolloutApi) return { open: true };
  return {
    open: false,
    rolloutToken: config.rolloutToken!,
    adminToken: config.adminToken,
    otherRoles: { node: config.nodeToken, trainer: config.trainerToken },
  };
}

function errorJson(c: Context, err: PolarError): Response {
  const { body, status } = adminErrorResponse(err);
  return c.json(body, status as 400);
}

export function createCoordinatorApp(deps: {
  coordinator: Coordinator;
  config: CoordinatorConfig;
  tasks: TaskCatalog;
  callbacks: CallbackSender;
  observability: CoordinatorObservability;
}): Hono {
  const { coordinator, config } = deps;
  const app = new Hono();
  app.get("/health", (c) => {
    const failing = coordinator.storeFailure;
    const health: CoordinatorHealth = {
      ok: failing === null,
      policy_version: coordinator.policyVersion,
      paused: coordinator.isPaused,
      nodes: [...coordinator.nodes.values()].filter((n) => n.peer).length,
      store: failing ? { writable: false, error: failing.description, since: failing.since } : { writable: true },
    };
    return c.json(health, failing ? 503 : 200);
  });
  app.route("/", dashboardRoutes());
  const isAdmin = (headers: Headers) => tokenMatches(presentedToken(headers), config.adminToken);
  if (config.metricsRequireAdminToken) {
    app.use("/metrics", async (c, next) => (isAdmin(c.req.raw.headers) ? next() : errorJson(c, new PolarError("unauthorized", "admin token required"))));
  }
  app.route("/metrics", metricsRoutes(deps.observability.metrics));
  app.route("/events", eventsRoutes(deps.observability.feed, isAdmin));
  app.route("/", rolloutApiRoutes(coordinator, coordinatorRolloutAccess(config), deps.tasks, deps.callbacks, config.callbackOnCancel));
  app.route("/v1/admin", adminRoutes(coordinator, config.adminToken, deps.tasks, deps.observability.operator));
  app.notFound((c) => errorJson(c, new PolarError("not_found", `no route ${c.req.method} ${c.req.path}`)));
  app.onError((err, c) => {
    const e = asPolarError(err);
    if (e.code === "internal")
      console.error(
        JSON.stringify({
          ts: new Date().toISOString(),
          level: "error",
          event: "http.failed",
          method: c.req.method,
          path: c.req.path,
          cause: describeCause(e.cause),
        }),
      );
    const { body, status } = adminErrorResponse(e);
    return c.json(body, status as 500);
  });
  return app;
}
