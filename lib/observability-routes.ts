// Why: `/metrics` and `/events` are mounted the same way on the node and the coordinator — each a
// small hono app the service mounts where it likes (`app.route("/metrics", …)`), so a service can
// put its own guard in front of either (an admin token on /metrics) without this code knowing.
import { Hono } from "hono";
import { adminErrorResponse, PolarError } from "../protocol/errors.ts";
import type { EventFeed } from "./event-feed.ts";
import { PROMETHEUS_CONTENT_TYPE, type MetricsRegistry } from "./metrics.ts";

/** `GET /` → the registry in Prometheus text format. */
export function metricsRoutes(registry: MetricsRegistry): Hono {
  const app = new Hono();
  app.get("/", () => new Response(registry.render(), { headers: { "content-type": PROMETHEUS_CONTENT_TYPE } }));
  return app;
}

/**
 * `GET /` → the feed as Server-Sent Events, for callers `authorized` admits (the admin token as
 * `Authorization: Bearer …`; the dashboard reads the stream with fetch, so no token is put in a URL).
 */
export function eventsRoutes(feed: EventFeed, authorized: (headers: Headers) => boolean): Hono {
  const app = new Hono();
  app.get("/", (c) => {
    if (!authorized(c.req.raw.headers)) {
      const { body, status } = adminErrorResponse(new PolarError("unauthorized", "admin token required"));
      return c.json(body, status as 401);
    }
    return feed.response(c.req.raw.signal, c.req.header("last-event-id") ?? c.req.query("last_event_id") ?? null);
  });
  return app;
}
