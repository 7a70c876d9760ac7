// Why: `polar node` standalone serves Polar's rollout API — the shared routes (lib/rollout-api)
// over this node's port: its TaskBook, pipeline metrics and warm pool — plus the node's own
// task list and health.
import { Hono } from "hono";
import type { RolloutApiPort } from "../../lib/rollout-api/port.ts";
import { rolloutApiRoutes } from "../../lib/rollout-api/routes.ts";
import type { TaskCatalog } from "../../lib/task-catalog.ts";
import type { HostPathPolicy } from "../../lib/upload-sources.ts";
import type { Pipeline } from "../pipeline/pipeline.ts";
import type { TaskBook } from "../pipeline/tasks.ts";

export interface RolloutRouteDeps {
  nodeId: string;
  tasks: TaskBook;
  pipeline: Pipeline;
  catalog: TaskCatalog;
  /** Ready sandboxes per pool key. */
  warm(): Record<string, number>;
  isDraining(): boolean;
  /** Host paths a request may upload from (w-sandbox's path roots); default: any that exists. */
  hostPaths?: HostPathPolicy;
}

/** The node's side of the rollout API. */
export function nodeRolloutPort(deps: RolloutRouteDeps): RolloutApiPort {
  return {
    refusal: () => (deps.isDraining() ? "the node is draining and accepts no new tasks" : null),
    submit: (task) => deps.tasks.submit(task),
    status: (taskId) => deps.tasks.status(taskId),
    cancel: (taskId) => deps.tasks.cancel(taskId),
    serviceStatus: async () => ({
      node_id: deps.nodeId,
      status: deps.isDraining() ? "draining" : "ok",
      metrics: deps.pipeline.metrics(),
      tasks: deps.tasks.liveCounts(),
      warm_sandboxes: deps.warm(),
    }),
  };
}

export function rolloutRoutes(deps: RolloutRouteDeps): Hono {
  const app = new Hono();
  app.route("/", rolloutApiRoutes(nodeRolloutPort(deps), { catalog: deps.catalog, ...(deps.hostPaths ? { hostPaths: deps.hostPaths } : {}) }));
  app.get("/tasks", (c) => c.json({ tasks: deps.catalog.ids().map((id) => ({ task_id: id })) }));
  app.get("/health", (c) => c.json({ status: "ok", node_id: deps.nodeId, draining: deps.isDraining() }));
  return app;
}
