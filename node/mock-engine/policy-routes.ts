// Why: the trainable policy's HTTP surface — its architecture and weights for anyone on the
// loopback (`GET /polar/policy`), weight updates only for the holder of the policy token
// (`POST /polar/policy`) — mounted on either engine API's app; errors use the app's error handler.
import type { Hono } from "hono";
import { presentedToken, tokenMatches } from "../../lib/tokens.ts";
import { PolicyWeights } from "../../protocol/engine-policy.ts";
import { EngineError } from "./engine-error.ts";
import { parseBody, readJson } from "./request.ts";
import type { TrainablePolicy } from "./trainable-policy.ts";

export function mountPolicyRoutes(app: Hono, policy: TrainablePolicy, token: string): void {
  app.get("/polar/policy", () => Response.json(policy.state()));
  app.post("/polar/policy", async (c) => {
    if (!tokenMatches(presentedToken(c.req.raw.headers), token))
      throw new EngineError("unauthorized", "a weight update needs the engine's policy token (Authorization: Bearer …)");
    policy.update(parseBody(PolicyWeights, await readJson(c.req.raw)));
    return Response.json(policy.state());
  });
}
