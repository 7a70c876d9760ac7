// Why: the session and admin APIs share one guard (admin token only) and one error shape.
import type { Context, Hono } from "hono";
import type { AdminErrorBody } from "../../../protocol/errors.ts";
import { asPolarError } from "../../../protocol/errors.ts";
import type { SessionAuth } from "../auth.ts";

export function adminError(c: Context, err: unknown): Response {
  const e = asPolarError(err);
  c.get("requestLog")?.failed(e);
  const body: AdminErrorBody = { error: { code: e.code, message: e.message } };
  return c.json(body, e.status as 400);
}

/** Requires the admin token on every route of `app` and answers its errors as plain JSON. */
export function guardWithAdminToken(app: Hono, auth: SessionAuth): Hono {
  app.use("*", async (c, next) => {
    try {
      await auth.requireAdmin(c.req.raw.headers);
    } catch (err) {
      return adminError(c, err);
    }
    await next();
  });
  app.onError((err, c) => adminError(c, err));
  return app;
}
