// Why: the trainer's weight-sync handshake (pause → swap weights → resume with a version) and
// health, kept apart from the session API they do not share state with.
import { Hono } from "hono";
import { ResumeBody, type AdminState } from "../../../protocol/admin.ts";
import type { CacheBudget } from "../../cache-budget.ts";
import type { SessionAuth } from "../auth.ts";
import type { PolicyGate } from "../policy-gate.ts";
import { readBody, type BodyLimits } from "./json-body.ts";
import { guardWithAdminToken } from "./admin-guard.ts";

export function adminRoutes(auth: SessionAuth, gate: PolicyGate, cache: CacheBudget, bodyLimits: BodyLimits): Hono {
  const app = guardWithAdminToken(new Hono(), auth);

  const state = (): AdminState => ({
    paused: gate.isPaused,
    in_flight: gate.inFlightCalls,
    waiting: gate.waitingCalls,
    policy_version: gate.policyVersion,
    cache: { used_bytes: cache.usedBytes, max_bytes: cache.maxBytes, entries: cache.entries },
  });

  /** Returns once every in-flight call has drained; new calls wait until resume. */
  app.post("/pause", async (c) => {
    await gate.pause();
    return c.json(state());
  });

  app.post("/resume", async (c) => {
    const body = await readBody(c, ResumeBody, bodyLimits);
    gate.resume(body.policy_version);
    return c.json(state());
  });

  app.get("/state", (c) => c.json(state()));
  return app;
}
