// Why: `polar node` in one Bun process — store, gateway (a library here, with per-rollout
// sockets), sandbox runtime and pool, pipeline, task book and Polar's rollout API — built from
// one validated config; importing this module opens nothing, startNode() does.
import { Hono } from "hono";
import { TaskRequest, type TaskResult } from "../protocol/rollout.ts";
import { EMPTY_CATALOG, loadTaskCatalog, BUNDLED_TASKS_FILE, type TaskCatalog } from "./api/task-catalog.ts";
import { rolloutRoutes } from "./api/rollout-routes.ts";
import type { CoordinatorLink } from "./agent.ts";
import { joinCoordinator } from "./cluster.ts";
import { createBackend } from "./gateway/backends/index.ts";
import { createGatewayApp } from "./gateway/app.ts";
import { isAdminToken, presentedKey } from "./gateway/auth.ts";
import { GatewayConfig } from "./gateway/config.ts";
import { harnessMounts } from "./harness/sandbox-mounts.ts";
import type { NodeConfig } from "./node-config.ts";
import { within } from "./pipeline/abortable.ts";
import { deliverCallback } from "./pipeline/callback.ts";
import { InProcessGatewaySessions } from "./pipeline/gateway-adapter.ts";
import { runtimePreparer, sandboxHarnessRunner, taskEvaluator } from "./pipeline/node-ports.ts";
import { Pipeline } from "./pipeline/pipeline.ts";
import type { HarnessRunner, RolloutEvaluator } from "./pipeline/ports.ts";
import { recoverUnfinished, type RecoveryReport } from "./pipeline/recovery.ts";
import { TaskBook } from "./pipeline/tasks.ts";
import { createDockerRuntime } from "./runtime/docker.ts";
import { createSandboxPool } from "./runtime/pool.ts";
import { createProcessRuntime } from "./runtime/process.ts";
import type { SandboxRuntime } from "./runtime/types.ts";
import { openNodeStore } from "./store/db.ts";
import { RolloutsRepo } from "./store/rollouts-repo.ts";

/** How long stop() waits for callbacks still being delivered. */
const CALLBACK_GRACE_MS = 5_000;

export interface NodeParts {
  /** Default: the runtime named by config.runtime. */
  runtime?: SandboxRuntime;
  runner?: HarnessRunner;
  evaluator?: RolloutEvaluator;
  catalog?: TaskCatalog;
}

export interface RunningNode {
  url: string;
  config: NodeConfig;
  runtime: SandboxRuntime;
  pipeline: Pipeline;
  tasks: TaskBook;
  recovery: RecoveryReport;
  /** Set when the node joined a coordinator. */
  link: CoordinatorLink | undefined;
  /** Resolves when every callback started so far has been delivered or given up. */
  callbacksSettled(): Promise<void>;
  stop(): Promise<void>;
}

export async function startNode(config: NodeConfig, parts: NodeParts = {}): Promise<RunningNode> {
  const store = await openNodeStore(config.db);
  const repo = new RolloutsRepo(store.db);
  const backend = createBackend(config.engine.backend, { urls: config.engine.urls, ...(config.engine.tokenizer ? { tokenizer: config.engine.tokenizer } : {}) });
  const gatewayConfig = GatewayConfig.parse({
    host: config.host,
    port: config.port,
    db: config.db,
    adminToken: config.admin_token,
    publicUrl: config.public_url,
    tokenizer: config.engine.tokenizer,
    maxTokensCap: config.sampling.max_tokens_cap,
    temperature: config.sampling.temperature,
    topP: config.sampling.top_p,
  });
  const gateway = createGatewayApp({ config: gatewayConfig, store, backend });

  const runtime = parts.runtime ?? (config.runtime === "docker" ? createDockerRuntime() : createProcessRuntime());
  const recovery = await recoverUnfinished(repo, config.node_id, () => runtime.removeLeftovers(config.node_id));
  const pool = createSandboxPool({
    runtime,
    nodeId: config.node_id,
    mounts: harnessMounts(),
    maxReadyPerKey: config.pool.max_ready_per_key,
    maxConcurrentStarts: config.pool.max_concurrent_starts,
  });
  const catalog = parts.catalog ?? (config.tasks === "" ? EMPTY_CATALOG : await loadTaskCatalog(config.tasks ?? BUNDLED_TASKS_FILE));

  const callbacks = new Set<Promise<void>>();
  const sending = new Set<string>();
  const sendCallback = (result: TaskResult) => {
    if (sending.has(result.task_id)) return;
    sending.add(result.task_id);
    const work = (async () => {
      const row = await repo.task(result.task_id);
      const url = row ? TaskRequest.safeParse(row.request).data?.callback_url : undefined;
      if (url) await deliverCallback(url, result, { attempts: config.callback.attempts, baseDelayMs: config.callback.base_delay_ms });
      await repo.markCallbackDone(result.task_id);
    })().catch((err) => console.error(`polar node: callback of task ${result.task_id} failed: ${err}`));
    callbacks.add(work);
    void work.finally(() => {
      callbacks.delete(work);
      sending.delete(result.task_id);
    });
  };

  let tasks: TaskBook | undefined;
  let link: CoordinatorLink | undefined;
  const pipeline = new Pipeline(
    {
      nodeId: config.node_id,
      initWorkers: config.workers.init,
      runWorkers: config.workers.run,
      postrunWorkers: config.workers.postrun,
      readyBacklog: config.workers.ready_backlog,
      ...(config.default_image ? { defaultRuntime: { image: config.default_image } } : {}),
    },
    {
      store: repo,
      pool,
      preparer: runtimePreparer,
      gateway: new InProcessGatewaySessions(gateway.sessions),
      runner: parts.runner ?? sandboxHarnessRunner({ defaultModel: config.engine.model }),
      evaluator: parts.evaluator ?? taskEvaluator(pool, (id) => catalog.get(id)),
      onResult: (result, rollout) => {
        void tasks?.onResult(result);
        link?.onResult(result, rollout.id);
      },
    },
  );
  tasks = new TaskBook({ store: repo, pipeline, onTaskDone: sendCallback });
  await tasks.load();

  let draining = false;
  const app = new Hono();
  app.route("/", rolloutRoutes({ nodeId: config.node_id, tasks, pipeline, catalog, warm: () => pool.warm(), isDraining: () => draining }));
  app.post("/v1/admin/drain", (c) => {
    if (!isAdminToken(presentedKey(c.req.raw.headers), config.admin_token)) return c.json({ error: { code: "unauthorized", message: "the admin token is required" } }, 401);
    draining = true;
    return c.json({ draining, live_rollouts: pipeline.liveRollouts().length });
  });
  app.route("/", gateway.app);

  if (config.coordinator) {
    link = joinCoordinator({
      coordinator: config.coordinator,
      nodeId: config.node_id,
      workers: config.workers,
      engines: config.engine.urls,
      db: store.db,
      rollouts: repo,
      pipeline,
      pool,
      gate: gateway.gate,
      catalog,
      drain: () => void (draining = true),
    });
  }

  const server = Bun.serve({ hostname: config.host, port: config.port, fetch: app.fetch, idleTimeout: 0, maxRequestBodySize: gatewayConfig.maxBodyBytes + 64 * 1024 });
  const url = `http://${config.host}:${server.port}`;
  gateway.setBaseUrl(url);
  // Tasks that finished before a crash but whose callback was not delivered.
  for (const row of await repo.pendingCallbacks()) {
    const results = await repo.results(row.taskId);
    sendCallback({ task_id: row.taskId, status: row.status as TaskResult["status"], results: results as TaskResult["results"], result_paths: [] });
  }

  return {
    url,
    config,
    runtime,
    pipeline,
    tasks,
    recovery,
    callbacksSettled: async () => {
      await Promise.all([...callbacks]);
    },
    link,
    async stop() {
      draining = true;
      await link?.stop();
      await pipeline.close();
      // A callback still retrying is resent at the next start (its task is not marked delivered).
      await within(Promise.all([...callbacks]), CALLBACK_GRACE_MS);
      await server.stop(true);
      await pool.close();
      gateway.close();
      store.close();
    },
  };
}
