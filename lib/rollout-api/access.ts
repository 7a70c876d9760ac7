// Why: anyone who reaches the rollout API can submit, read and cancel tasks, so on both services it
// asks for its own role's token (or the service's admin token) before any route runs; running
// without one is an explicit choice that only a loopback-only listener may make.
import type { MiddlewareHandler } from "hono";
import { presentedToken, tokenMatches } from "../tokens.ts";

/**
 * Header NVIDIA's rollout server and its slime bridge send their control-plane token in
 * (`X-Polar-Control-Token`, from POLAR_CONTROL_PLANE_TOKEN); accepted besides `Authorization: Bearer`.
 */
export const CONTROL_TOKEN_HEADER = "x-polar-control-token";

/** Who may use the rollout API: `open` (loopback only, `--open`), or the holders of these tokens. */
export type RolloutApiAccess =
  | { open: true }
  | {
      open: false;
      /** The rollout role's token (trainers, Gym, scripts submitting tasks). */
      rolloutToken: string;
      /** The service's admin token opens everything on it, the rollout API included. */
      adminToken: string;
      /** The service's other roles' tokens (node, trainer stream): recognised only to answer 403, not 401. */
      otherRoles: Record<string, string>;
    };

/** The credential a rollout-API caller presents: `Authorization: Bearer <t>` or `X-Polar-Control-Token: <t>`. */
export function presentedRolloutToken(headers: Headers): string | undefined {
  return presentedToken(headers) || headers.get(CONTROL_TOKEN_HEADER)?.trim() || undefined;
}

/** Null when the caller may proceed; otherwise FastAPI's refusal (401 no/unknown token, 403 another role's). */
export function rolloutApiRefusal(access: RolloutApiAccess, headers: Headers): { status: 401 | 403; detail: string } | null {
  if (access.open) return null;
  const presented = presentedRolloutToken(headers);
  if (tokenMatches(presented, access.rolloutToken) || tokenMatches(presented, access.adminToken)) return null;
  for (const [role, token] of Object.entries(access.otherRoles)) {
    if (tokenMatches(presented, token)) return { status: 403, detail: `the ${role} token does not open the rollout API` };
  }
  return { status: 401, detail: presented ? "invalid rollout token" : "rollout token required (Authorization: Bearer <token>)" };
}

/** Hono middleware in front of the rollout routes. */
export function rolloutApiGuard(access: RolloutApiAccess): MiddlewareHandler {
  return async (c, next) => {
    const refusal = rolloutApiRefusal(access, c.req.raw.headers);
    if (!refusal) return next();
    return c.json({ detail: refusal.detail }, refusal.status, refusal.status === 401 ? { "www-authenticate": "Bearer" } : {});
  };
}

/** Whether a listen address is loopback only (the one place an open rollout API is allowed). */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/** Words of the startup line about the rollout API. */
export function describeRolloutAccess(access: RolloutApiAccess): string {
  return access.open ? "rollout API OPEN (no token; loopback only)" : "rollout API requires the rollout token";
}
