// Why: node agents on other hosts, tests and operators open, inspect and clean up gateway sessions
// over HTTP; these routes are a thin shell over the session service (session-service.ts) — admin
// token, body and query parsing, JSON out — and answer errors in one plain JSON shape.
import { Hono } from "hono";
import type { SessionCalls } from "../../../protocol/calls.ts";
import { CreateSessionBody, type DeletedSession } from "../../../protocol/sessions.ts";
import { Strategy, TrajectoryQuery } from "../../../protocol/trace.ts";
import { PolarError } from "../../../protocol/errors.ts";
import { STRATEGIES } from "../../trajectory/index.ts";
import type { SessionAuth } from "../auth.ts";
import type { SessionService } from "../session-service.ts";
import { guardWithAdminToken } from "./admin-guard.ts";
import { readBody, type BodyLimits } from "./json-body.ts";

export interface SessionRouteDeps {
  auth: SessionAuth;
  service: SessionService;
  bodyLimits: BodyLimits;
}

export function sessionRoutes(deps: SessionRouteDeps): Hono {
  const app = guardWithAdminToken(new Hono(), deps.auth);
  const { service } = deps;

  app.post("/", async (c) => {
    const body = await readBody(c, CreateSessionBody, deps.bodyLimits);
    return c.json(await service.create(body.metadata ?? {}), 201);
  });

  app.get("/:id", async (c) => c.json(await service.info(c.req.param("id"))));

  app.get("/:id/calls", async (c) => {
    const id = c.req.param("id");
    return c.json({ session_id: id, calls: await service.calls(id) } satisfies SessionCalls);
  });

  app.get("/:id/trajectory", async (c) => {
    const query = TrajectoryQuery.safeParse(c.req.query());
    if (!query.success) throw new PolarError("bad_request", query.error.issues.map((i) => i.message).join("; "));
    const { strategy = "template-aware", max_context_drift: maxContextDrift } = query.data;
    const known = Strategy.safeParse(strategy);
    if (!known.success) throw new PolarError("bad_request", `unknown strategy "${strategy}"; expected one of ${STRATEGIES.join(", ")}`);
    return c.json(await service.trajectory(c.req.param("id"), known.data, maxContextDrift === undefined ? {} : { maxContextDrift }));
  });

  /** Revokes the token (no new calls) but keeps the recorded calls. */
  app.post("/:id/close", async (c) => c.json(await service.close(c.req.param("id"))));

  /** Deletes the session and its recorded calls. */
  app.delete("/:id", async (c) => {
    const id = c.req.param("id");
    await service.delete(id);
    return c.json({ id, deleted: true } satisfies DeletedSession);
  });

  return app;
}
