// Why: the trainable policy's HTTP surface — its architecture and weights for anyone on the
// loopback (`GET /polar/policy`), weight updates only for the holder of the policy token
// (`POST /polar/policy`) — mounted on either engine API's app; errors use the app's error handler.
import { timingSafeEqual } from "node:crypto";
import type { Hono } from "hono";
import { PolicyWeights } from "../../protocol/engine-policy.ts";
import { EngineError } from "./engine-error.ts";
import { parseBody, readJson } from "./request.ts";
import type { TrainablePolicy } from "./trainable-policy.ts";

function presentsToken(header: string | undefined, token: string): boolean {
  const presented = header?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
  if (!presented) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function mountPolicyRoutes(app: Hono, policy: TrainablePolicy, token: string): void {
  app.get("/polar/policy", () => Response.json(policy.state()));
  app.post("/polar/policy", async (c) => {
    if (!presentsToken(c.req.header("authorization"), token))
      throw new EngineError("unauthorized", "a weight update needs the engine's policy token (Authorization: Bearer …)");
    policy.update(parseBody(PolicyWeights, await readJson(c.req.raw)));
    return Response.json(policy.state());
  });
}
