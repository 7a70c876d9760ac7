// Why: Polar's rollout API as a standalone node serves it — submit a TaskRequest, poll or cancel
// a task, node status — so a trainer integration written for NVIDIA's rollout server works
// unchanged. Errors answer as FastAPI does (`detail`), 422 naming each bad field.
import { Hono, type Context } from "hono";
import type { TaskRequest, TaskSubmitted } from "../../protocol/rollout.ts";
import { readTaskSubmission } from "../../lib/task-submission.ts";
import { PolarError } from "../errors.ts";
import type { Pipeline } from "../pipeline/pipeline.ts";
import type { TaskBook } from "../pipeline/tasks.ts";
import { withTaskDefaults, type TaskCatalog } from "./task-catalog.ts";

export interface RolloutRouteDeps {
  nodeId: string;
  tasks: TaskBook;
  pipeline: Pipeline;
  catalog: TaskCatalog;
  /** Ready sandboxes per pool key. */
  warm(): Record<string, number>;
  isDraining(): boolean;
  /** Null when the request's task can be evaluated on this node; why not otherwise (answered 422). */
  evaluable?(request: TaskRequest): Promise<string | null>;
  /** Invalid evaluations so far, by cause (served in /rollout/status). */
  evaluationErrors?(): Record<string, number>;
}

function detailError(c: Context, err: unknown): Response {
  if (err instanceof PolarError) return c.json({ detail: err.message }, err.status as 400);
  throw err;
}

export function rolloutRoutes(deps: RolloutRouteDeps): Hono {
  const app = new Hono();

  app.post("/rollout/task/submit", async (c) => {
    if (deps.isDraining()) return c.json({ detail: "the node is draining and accepts no new tasks" }, 503);
    const submission = await readTaskSubmission(c.req.raw, (raw) => withTaskDefaults(raw, typeof raw.task_id === "string" ? deps.catalog.get(raw.task_id) : undefined));
    if (!submission.ok) return c.json({ detail: submission.detail }, 422);
    const { request, harness, strategy } = submission;
    // A task this node can never score is refused before any rollout is spent on it.
    const unevaluable = await deps.evaluable?.(request);
    if (unevaluable) return c.json({ detail: unevaluable }, 422);
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
      ...(deps.evaluationErrors ? { evaluation_errors: deps.evaluationErrors() } : {}),
    }),
  );

  app.get("/tasks", (c) => c.json({ tasks: deps.catalog.ids().map((id) => ({ task_id: id })) }));
  app.get("/health", (c) => c.json({ status: "ok", node_id: deps.nodeId, draining: deps.isDraining() }));
  return app;
}
