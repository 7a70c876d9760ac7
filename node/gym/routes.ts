// Why: the three routes Gym calls on an agent server — `GET /` (its liveness probe), `POST /run`
// (one dataset row → one rollout) and `POST /aggregate_metrics` — with FastAPI's error shapes
// (422 `detail: [{loc, msg, type}]`), since Gym's own servers are FastAPI apps.
import { Hono, type Context } from "hono";
import { GymAggregateMetricsRequest, GymRunRequest } from "../../protocol/gym.ts";
import { fieldError, parseLikePydantic } from "../../lib/fastapi-errors.ts";
import { PolarError } from "../../protocol/errors.ts";
import { readJson, type BodyLimits } from "../gateway/routes/json-body.ts";
import { aggregateMetrics } from "./metrics.ts";
import { runRow, type RunDeps } from "./run.ts";

export interface GymRouteDeps extends RunDeps {
  bodyLimits: BodyLimits;
}

async function body(c: Context, limits: BodyLimits): Promise<{ ok: true; value: unknown } | { ok: false; response: Response }> {
  try {
    return { ok: true, value: await readJson(c, limits) };
  } catch (err) {
    if (!(err instanceof PolarError)) throw err;
    if (err.code === "too_large") return { ok: false, response: c.json({ detail: err.message }, 413) };
    return { ok: false, response: c.json(fieldError([0], err.message, "json_invalid"), 422) };
  }
}

export function gymRoutes(deps: GymRouteDeps): Hono {
  const app = new Hono();

  app.get("/", (c) => c.json({ status: "ok", node_id: deps.nodeId, harness: deps.config.harness, live_runs: deps.catalog.held }));

  app.post("/run", async (c) => {
    const read = await body(c, deps.bodyLimits);
    if (!read.ok) return read.response;
    const row = parseLikePydantic(GymRunRequest, read.value);
    if (!row.ok) return c.json({ detail: row.detail }, 422);
    try {
      const answer = await runRow(row.data, deps, c.req.raw.signal);
      return c.json(answer.body, answer.status);
    } catch (err) {
      // Nobody reads this answer: the client hung up and the rollout was cancelled (nginx's 499).
      if (c.req.raw.signal.aborted) return new Response(null, { status: 499 });
      console.error(`polar gym: /run failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      return c.json({ detail: `the rollout could not be run: ${err instanceof Error ? err.message : String(err)}` }, 500);
    }
  });

  app.post("/aggregate_metrics", async (c) => {
    const read = await body(c, deps.bodyLimits);
    if (!read.ok) return read.response;
    const request = parseLikePydantic(GymAggregateMetricsRequest, read.value);
    if (!request.ok) return c.json({ detail: request.detail }, 422);
    return c.json(aggregateMetrics(request.data.verify_responses));
  });

  app.notFound((c) => c.json({ detail: "Not Found" }, 404));
  return app;
}
