// Why: end-to-end tests of `polar node` start the same stack — the mock engine and a node on
// port 0 with its own SQLite file and node id — and poll tasks as a trainer would.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TaskStatus } from "../../protocol/rollout.ts";
import { startMockEngine, type MockEngineOptionsInput, type RunningMockEngine } from "../../node/mock-engine/index.ts";
import { BUNDLED_TASKS_FILE } from "../../node/api/task-catalog.ts";
import { startNode, type NodeParts, type RunningNode } from "../../node/main.ts";
import { parseNodeConfig, type NodeConfigInput } from "../../node/node-config.ts";
import { ROLLOUT_TOKEN, rolloutFetch } from "./rollout-fetch.ts";

export const ADMIN_TOKEN = "e2e-admin-token-0123456789";

export interface NodeStack {
  engine: RunningMockEngine;
  node: RunningNode;
  dir: string;
  stop(): Promise<void>;
}

/** The mock engine solves bundled tasks (gold patch) in half of the sessions, deterministically per seed. */
export async function startNodeStack(
  settings: Partial<NodeConfigInput> = {},
  parts: NodeParts = {},
  engineOptions: MockEngineOptionsInput = {},
): Promise<NodeStack> {
  const dir = mkdtempSync(join(tmpdir(), "polar-node-e2e-"));
  const engine = await startMockEngine({ port: 0, tasks: BUNDLED_TASKS_FILE, successProbability: 0.5, ...engineOptions });
  const node = await startNode(
    parseNodeConfig({
      admin_token: ADMIN_TOKEN,
      rollout_token: ROLLOUT_TOKEN,
      port: 0,
      db: join(dir, "node.db"),
      node_id: `e2e-${process.pid}-${Date.now()}`,
      engine: { urls: [engine.url] },
      ...settings,
    }),
    parts,
  );
  return {
    engine,
    node,
    dir,
    async stop() {
      await node.stop();
      await engine.stop();
    },
  };
}

export async function submit(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await rolloutFetch(`${url}/rollout/task/submit`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

/** Polls GET /rollout/task/{id} until the task is no longer running. */
export async function pollTask(url: string, taskId: string, timeoutMs = 180_000): Promise<TaskStatus> {
  const t0 = Date.now();
  for (;;) {
    const status = TaskStatus.parse(await (await rolloutFetch(`${url}/rollout/task/${taskId}`)).json());
    if (status.status !== "running" && status.status !== "cancelling") return status;
    if (Date.now() - t0 > timeoutMs) throw new Error(`task ${taskId} still ${status.status} after ${timeoutMs} ms`);
    await Bun.sleep(200);
  }
}
