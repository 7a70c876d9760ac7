// Why: the coordinator serves Polar's rollout API over the whole cluster — the shared routes
// (lib/rollout-api) over the coordinator's port — so a trainer integration written for one
// `polar node` moves here unchanged.
import type { Hono } from "hono";
import type { RolloutApiAccess } from "../../lib/rollout-api/access.ts";
import type { CallbackSender } from "../../lib/rollout-api/callbacks.ts";
import { rolloutApiRoutes as sharedRoutes } from "../../lib/rollout-api/routes.ts";
import type { TaskCatalog } from "../../lib/task-catalog.ts";
import type { Coordinator } from "../coordinator.ts";
import { coordinatorRolloutPort } from "../rollout-api-port.ts";

export function rolloutApiRoutes(
  coordinator: Coordinator,
  access: RolloutApiAccess,
  tasks: TaskCatalog,
  callbacks: CallbackSender,
  callbackOnCancel: boolean,
): Hono {
  return sharedRoutes(coordinatorRolloutPort(coordinator, { callbacks, callbackOnCancel }), { access, catalog: tasks });
}
