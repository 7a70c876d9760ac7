// Why: Polar's rollout API as a standalone node serves it — submit a TaskRequest, poll or cancel
// a task, node status — so a trainer integration written for NVIDIA's rollout server works
// unchanged. Errors answer as FastAPI does (`detail`), 422 naming each bad field.
import { Hono, type Context } from "hono";
import { TaskRequest, type TaskSubmitted } from "../../protocol/rollout.ts";
import { PolarError } from "../errors.ts";
import { ACCEPTED_BUILDER_NAMES, ACCEPTED_HARNESS_NAMES, builderStrategy, harnessKind } from "../pipeline/names.ts";
import type { Pipeline } from "../pipeline/pipeline.ts";
import type { TaskBook } from "../pipeline/tasks.ts";
import { withTaskDefaults, type TaskCatalog } from "./task-catalog.ts";
import { fieldError, validationDetail } from "./validation.ts";

export interface RolloutRouteDeps {
  nodeId: string;
  tasks: TaskBook;
  pipeline: Pipeline;
  catalog: TaskCatalog;
  /** Ready sandboxes per pool key. */
  warm(): Record<string, number>;
  isDraining(): boolean;
}

function detailError(c: Context, err: unknown): Response {
  if (err instanceof PolarError) return c.json({ detail: err.message }, err.status as 400);
  throw err;
}

export function rolloutRoutes(deps: RolloutRouteDeps): Hono {
  const app = new Hono();

  app.post("/rollout/task/submit", async (c) => {
    if (deps.isDraining()) return c.json({ detail: "the node is draining and accepts no new tasks" }, 503);
    let body: unknown;
    try {
      body = await c.req.json();
    } catch (err) {
      return c.json(fieldError([0], `JSON decode error: ${err instanceof Error ? err.message : String(err)}`, "json_invalid"), 422);
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) return c.json(fieldError([], "Input should be a valid dictionary", "model_attributes_type"), 422);
    const raw = body as Record<string, unknown>;
    const row = typeof raw.task_id === "string" ? deps.catalog.get(raw.task_id) : undefined;
    const parsed = TaskRequest.safeParse(withTaskDefaults(raw, row));
    if (!parsed.success) return c.json({ detail: validationDetail(parsed.error) }, 422);
    const request = parsed.data;
    const harness = harnessKind(request.agent.harness);
    if (!harness) return c.json(fieldError(["agent", "harness"], `unknown harness "${request.agent.harness}"; expected one of ${ACCEPTED_HARNESS_NAMES.join(", ")}`, "enum"), 422);
    const strategy = builderStrategy(request.builder.strategy);
    if (!strategy) return c.json(fieldError(["builder", "strategy"], `unknown builder strategy "${request.builder.strategy}"; expected one of ${ACCEPTED_BUILDER_NAMES.join(", ")}`, "enum"), 422);
    try {
      await deps.tasks.submit(request, harness, strategy);
    } catch (err) {
      return detailError(c, err);
    }
    return c.json({ task_id: request.task_id, status: "running" } satisfies TaskSubmitted);
  });

  app.get("/rollout/task/:id", (c) => {
    try {
      return c.json(deps.tasks.status(c.req.param("id")));
    } catch (err) {
      return detailError(c, err);
    }
  });

  app.delete("/rollout/task/:id", async (c) => {
    try {
      return c.json(await deps.tasks.cancel(c.req.param("id"), c.req.query("register_if_missing") === "true"));
    } catch (err) {
      return detailError(c, err);
    }
  });

  app.get("/rollout/status", (c) =>
    c.json({
      node_id: deps.nodeId,
      status: deps.isDraining() ? "draining" : "ok",
      metrics: deps.pipeline.metrics(),
      tasks: deps.tasks.counts(),
      warm_sandboxes: deps.warm(),
    }),
  );

  app.get("/tasks", (c) => c.json({ tasks: deps.catalog.ids().map((id) => ({ task_id: id })) }));
  app.get("/health", (c) => c.json({ status: "ok", node_id: deps.nodeId, draining: deps.isDraining() }));
  return app;
}
