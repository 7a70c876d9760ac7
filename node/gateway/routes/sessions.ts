// Why: node agents, tests and operators open, inspect and clean up gateway sessions here; every
// route needs the admin token, and answers errors in one plain JSON shape.
import { Hono } from "hono";
import type { SessionCalls } from "../../../protocol/calls.ts";
import { CreateSessionBody, type DeletedSession, type SessionInfo } from "../../../protocol/sessions.ts";
import { TrajectoryQuery } from "../../../protocol/trace.ts";
import { PolarError } from "../../../protocol/errors.ts";
import type { CallsRepo } from "../../store/calls-repo.ts";
import type { SessionRow, SessionsRepo } from "../../store/sessions-repo.ts";
import type { SessionAuth } from "../auth.ts";
import type { CallPath } from "../call-path.ts";
import type { TrajectoryService } from "../trajectory-service.ts";
import { guardWithAdminToken } from "./admin-guard.ts";
import { readBody, type BodyLimits } from "./json-body.ts";

export interface SessionRouteDeps {
  auth: SessionAuth;
  sessions: SessionsRepo;
  calls: CallsRepo;
  callPath: CallPath;
  trajectories: TrajectoryService;
  bodyLimits: BodyLimits;
  /** The gateway's base URL as clients reach it. */
  baseUrl: () => string;
}

export function sessionRoutes(deps: SessionRouteDeps): Hono {
  const app = guardWithAdminToken(new Hono(), deps.auth);

  const info = async (row: SessionRow, token?: string): Promise<SessionInfo> => {
    const base = deps.baseUrl();
    const prefix = token ? `${base}/s/${token}` : base;
    return {
      id: row.id,
      ...(token ? { token } : {}),
      openai_base_url: `${prefix}/v1`,
      anthropic_base_url: prefix,
      metadata: row.metadata,
      created_at: row.createdAt,
      closed_at: row.closedAt,
      call_count: await deps.calls.count(row.id),
    };
  };

  const mustGet = async (id: string): Promise<SessionRow> => {
    const row = await deps.sessions.get(id);
    if (!row) throw new PolarError("not_found", `no session ${id}`);
    return row;
  };

  app.post("/", async (c) => {
    const body = await readBody(c, CreateSessionBody, deps.bodyLimits);
    const { row, token } = await deps.sessions.create(body.metadata ?? {});
    return c.json(await info(row, token), 201);
  });

  app.get("/:id", async (c) => c.json(await info(await mustGet(c.req.param("id")))));

  app.get("/:id/calls", async (c) => {
    const row = await mustGet(c.req.param("id"));
    return c.json({ session_id: row.id, calls: await deps.calls.list(row.id) } satisfies SessionCalls);
  });

  app.get("/:id/trajectory", async (c) => {
    const row = await mustGet(c.req.param("id"));
    const query = TrajectoryQuery.safeParse(c.req.query());
    if (!query.success) throw new PolarError("bad_request", query.error.issues.map((i) => i.message).join("; "));
    const { strategy = "template-aware", max_context_drift: maxContextDrift } = query.data;
    return c.json(await deps.trajectories.rebuild(row.id, strategy, maxContextDrift === undefined ? {} : { maxContextDrift }));
  });

  /** Revokes the token (no new calls) but keeps the recorded calls. */
  app.post("/:id/close", async (c) => {
    const row = await mustGet(c.req.param("id"));
    await deps.sessions.close(row.id);
    deps.callPath.forget(row.id);
    return c.json(await info((await deps.sessions.get(row.id))!));
  });

  /** Deletes the session and its recorded calls. */
  app.delete("/:id", async (c) => {
    const row = await mustGet(c.req.param("id"));
    await deps.sessions.delete(row.id);
    deps.callPath.forget(row.id);
    return c.json({ id: row.id, deleted: true } satisfies DeletedSession);
  });

  return app;
}
