// Why: `polar node` standalone serves Polar's rollout API — the shared routes (lib/rollout-api)
// over this node's port: its TaskBook, pipeline metrics and warm pool — plus the node's own
// task list and health.
import { Hono } from "hono";
import { rolloutApiGuard, type RolloutApiAccess } from "../../lib/rollout-api/access.ts";
import type { RolloutApiPort } from "../../lib/rollout-api/port.ts";
import type { NodeHealth } from "../../protocol/admin.ts";
import type { TaskRequest } from "../../protocol/rollout.ts";
import { rolloutApiRoutes } from "../../lib/rollout-api/routes.ts";
import type { TaskCatalog } from "../../lib/task-catalog.ts";
import { SOURCES_MUST_EXIST, type HostPathPolicy } from "../../lib/upload-sources.ts";
import type { Pipeline } from "../pipeline/pipeline.ts";
import type { StoreFailure } from "../store/store-health.ts";
import type { TaskBook } from "../pipeline/tasks.ts";
import { hostPathRefusal, runtimeRequestRefusals, type SandboxPolicy } from "../runtime/sandbox-policy.ts";

export interface RolloutRouteDeps {
  nodeId: string;
  /** Who may call the rollout API and /tasks (the rollout or admin token, or open on loopback). */
  access: RolloutApiAccess;
  tasks: TaskBook;
  pipeline: Pipeline;
  catalog: TaskCatalog;
  /** What a request's runtime may ask for (host paths, network host, cap_add). */
  sandboxPolicy: SandboxPolicy;
  /** Ready sandboxes per pool key. */
  warm(): Record<string, number>;
  isDraining(): boolean;
  /** The store's last write failure while writes fail (a full disk), else null: the node is unhealthy and takes no tasks. */
  storeFailure(): StoreFailure | null;
  /** Null when the request's task can be evaluated on this node; why not otherwise (answered 422). */
  evaluable?(request: TaskRequest): Promise<string | null>;
  /** Invalid evaluations so far, by cause (served in /rollout/status). */
  evaluationErrors?(): Record<string, number>;
}

/**
 * Upload sources must lie inside the operator's roots — checked lexically first, so a request
 * cannot probe which host paths outside them exist — and then exist as the step needs.
 */
export function sandboxHostPaths(policy: SandboxPolicy): HostPathPolicy {
  return {
    refuse: async (path, kind) => hostPathRefusal(path, policy.hostPathRoots) ?? SOURCES_MUST_EXIST.refuse(path, kind),
  };
}

/** The node's side of the rollout API. */
export function nodeRolloutPort(deps: RolloutRouteDeps): RolloutApiPort {
  return {
    refusal: () => {
      if (deps.isDraining()) return "the node is draining and accepts no new tasks";
      const failing = deps.storeFailure();
      return failing ? `the node's store cannot write (${failing.description}); no task is taken until it can` : null;
    },
    submit: async (task) => {
      // A task this node can never score is refused before any rollout is spent on it.
      const unevaluable = await deps.evaluable?.(task.request);
      if (unevaluable) return { accepted: false, status: 422, detail: unevaluable };
      return deps.tasks.submit(task);
    },
    status: (taskId) => deps.tasks.status(taskId),
    cancel: (taskId) => deps.tasks.cancel(taskId),
    serviceStatus: async () => ({
      node_id: deps.nodeId,
      status: deps.storeFailure() ? "unhealthy" : deps.isDraining() ? "draining" : "ok",
      metrics: deps.pipeline.metrics(),
      tasks: deps.tasks.liveCounts(),
      warm_sandboxes: deps.warm(),
      ...(deps.evaluationErrors ? { evaluation_errors: deps.evaluationErrors() } : {}),
    }),
  };
}

export function rolloutRoutes(deps: RolloutRouteDeps): Hono {
  const app = new Hono();
  app.route(
    "/",
    rolloutApiRoutes(nodeRolloutPort(deps), {
      access: deps.access,
      catalog: deps.catalog,
      hostPaths: sandboxHostPaths(deps.sandboxPolicy),
      // network host and cap_add (host paths were checked above, as every source is).
      refuseRequest: ({ request }) =>
        runtimeRequestRefusals(request.runtime, deps.sandboxPolicy).map((r) => ({
          type: "value_error",
          loc: ["body", "runtime", ...r.loc],
          msg: `Value error, ${r.msg}`,
        })),
    }),
  );
  app.get("/tasks", rolloutApiGuard(deps.access), (c) => c.json({ tasks: deps.catalog.ids().map((id) => ({ task_id: id })) }));
  // 503 while the store cannot write, so a balancer or supervisor sees it; it answers 200 again once writes can succeed.
  app.get("/health", (c) => {
    const failing = deps.storeFailure();
    if (!failing) return c.json({ status: "ok", node_id: deps.nodeId, draining: deps.isDraining(), store: { writable: true } } satisfies NodeHealth);
    return c.json(
      {
        status: "unhealthy",
        node_id: deps.nodeId,
        draining: true,
        store: { writable: false, error: failing.description, since: failing.at },
      } satisfies NodeHealth,
      503,
    );
  });
  return app;
}
