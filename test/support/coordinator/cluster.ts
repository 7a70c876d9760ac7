// Why: coordinator tests share one setup — a coordinator on port 0 with a fresh SQLite file and
// the four tokens, simulated nodes and trainer clients attached to it — built here once.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TrainerClient, type TrainerClientOptions } from "../../../clients/typescript/trainer-client.ts";
import type { CoordinatorConfigInput } from "../../../coordinator/config.ts";
import { startCoordinator, type CoordinatorDeps, type RunningCoordinator } from "../../../coordinator/server.ts";
import { SimulatedNode, type SimulatedNodeOptions } from "./simulated-node.ts";

export const TOKENS = {
  nodeToken: "node-token-0123456789abcdef",
  trainerToken: "trainer-token-0123456789abcd",
  adminToken: "admin-token-0123456789abcdef",
  rolloutToken: "rollout-token-0123456789abcd",
};

export interface Cluster {
  coordinator: RunningCoordinator;
  dir: string;
  db: string;
  /** The coordinator's structured log lines, parsed (every life of it, in order). */
  logs: Record<string, unknown>[];
  node(id: string, options?: Partial<SimulatedNodeOptions>): Promise<SimulatedNode>;
  trainer(id: string, options?: Partial<TrainerClientOptions>): Promise<TrainerClient>;
  admin(path: string, init?: RequestInit): Promise<Response>;
  /** Stops the coordinator (nodes and trainers stay) and starts a new one on the same file and port; `meanwhile` runs while it is down. */
  restart(meanwhile?: () => void | Promise<void>): Promise<void>;
  stop(): Promise<void>;
}

export async function startCluster(config: Partial<CoordinatorConfigInput> = {}, deps: CoordinatorDeps = {}): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), "polar-coord-"));
  const db = join(dir, "coordinator.db");
  const base = { port: 0, db, heartbeatMs: 200, nodeGraceMs: 300, ...TOKENS, ...config };
  const logs: Record<string, unknown>[] = [];
  const withLogs: CoordinatorDeps = { logSink: (line) => void logs.push(JSON.parse(line) as Record<string, unknown>), ...deps };
  let coordinator = await startCoordinator(base, withLogs);
  const nodes: SimulatedNode[] = [];
  const nodeSecrets = new Map<string, string>();
  const trainerSecrets = new Map<string, string>();
  const trainers: TrainerClient[] = [];
  const cluster: Cluster = {
    coordinator,
    dir,
    db,
    logs,
    async node(id, options = {}) {
      const node = new SimulatedNode({ url: cluster.coordinator.url, token: TOKENS.nodeToken, nodeId: id, heartbeatMs: 100, secrets: nodeSecrets, ...options });
      nodes.push(node);
      await node.connect();
      return node;
    },
    async trainer(id, options = {}) {
      const client = new TrainerClient({
        url: cluster.coordinator.url,
        token: TOKENS.trainerToken,
        trainerId: id,
        reconnectDelayMs: 50,
        secret: trainerSecrets.get(id),
        onSecret: (s) => void trainerSecrets.set(id, s),
        ...options,
      });
      trainers.push(client);
      await client.ready();
      return client;
    },
    admin: (path, init = {}) =>
      fetch(`${cluster.coordinator.url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${TOKENS.adminToken}`, "content-type": "application/json", ...init.headers },
      }),
    async restart(meanwhile) {
      const port = Number(new URL(cluster.coordinator.url).port);
      await cluster.coordinator.stop();
      await meanwhile?.();
      coordinator = await startCoordinator({ ...base, port }, withLogs);
      cluster.coordinator = coordinator;
    },
    async stop() {
      for (const t of trainers) t.close();
      for (const n of nodes) n.kill();
      await cluster.coordinator.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return cluster;
}

/** Polls until `check` holds (state that arrives over sockets); fails with `what` after `timeoutMs`. */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

export const TASK = { task_id: "t-echo", instruction: "say hi", runtime: { image: "polar-busybox:latest" }, evaluator: { strategy: "none" } };
export const AGENT = { harness: "mini" };
