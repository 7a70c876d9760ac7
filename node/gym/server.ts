// Why: `polar gym` is a `polar node` plus the Gym agent server in front of it: the node (its own
// port, private by default) runs the rollouts, the agent server answers Gym on the host and port
// Gym assigned and drives the node through its public APIs. Importing this opens nothing;
// startGymAgent() does.
import { randomBytes } from "node:crypto";
import { TaskCatalog } from "../../lib/task-catalog.ts";
import { BUNDLED_TASKS_FILE, loadTaskCatalog } from "../api/task-catalog.ts";
import { startNode, type NodeParts, type RunningNode } from "../main.ts";
import { mergeLayers, parseNodeConfig } from "../node-config.ts";
import type { GymSettings } from "./config.ts";
import { httpPolarRollouts } from "./polar-client.ts";
import { RolloutTaskCatalog } from "./rollout-tasks.ts";
import { gymRoutes } from "./routes.ts";

/** Bodies Gym may send (a row with a long prompt, or many verify responses to aggregate). */
export const GYM_BODY_LIMITS = { maxBytes: 64 * 1024 * 1024, maxDepth: 256 };

export interface RunningGymAgent {
  /** Where Gym reaches the agent server. */
  url: string;
  settings: GymSettings;
  node: RunningNode;
  catalog: RolloutTaskCatalog;
  stop(): Promise<void>;
}

/** Starts the node (settings.node over Polar's defaults, port 0) and the agent server on settings.agent's host and port. */
export async function startGymAgent(settings: GymSettings, parts: Omit<NodeParts, "catalog"> = {}): Promise<RunningGymAgent> {
  const layer = mergeLayers({ port: 0 }, settings.node);
  if (layer.admin_token === undefined) layer.admin_token = process.env.POLAR_ADMIN_TOKEN ?? `adm-${randomBytes(24).toString("base64url")}`;
  // The agent server drives its node with the admin token; the rollout token is for anyone else the operator lets in.
  if (layer.rollout_token === undefined && layer.open_rollout_api !== true)
    layer.rollout_token = process.env.POLAR_ROLLOUT_TOKEN ?? `rol-${randomBytes(24).toString("base64url")}`;
  const config = parseNodeConfig(layer);
  const base = config.tasks === "" ? TaskCatalog.empty() : await loadTaskCatalog(config.tasks ?? BUNDLED_TASKS_FILE);
  const catalog = new RolloutTaskCatalog(base);
  const node = await startNode(config, { ...parts, catalog });
  const app = gymRoutes({
    config: settings.agent,
    polar: httpPolarRollouts(node.url, config.admin_token),
    catalog,
    nodeId: config.node_id,
    bodyLimits: GYM_BODY_LIMITS,
  });
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: settings.agent.host,
      port: settings.agent.port,
      fetch: app.fetch,
      idleTimeout: 0,
      maxRequestBodySize: GYM_BODY_LIMITS.maxBytes + 64 * 1024,
    });
  } catch (err) {
    await node.stop();
    throw err;
  }
  return {
    url: `http://${settings.agent.host}:${server.port}`,
    settings,
    node,
    catalog,
    async stop() {
      await server.stop(true);
      await node.stop();
    },
  };
}
