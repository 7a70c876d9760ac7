// Why: `polar node` in one Bun process — store, gateway (a library here, with per-rollout
// sockets), sandbox runtime and pool, pipeline, task book and Polar's rollout API — built from
// one validated config; importing this module opens nothing, startNode() does.
import { dirname, resolve } from "node:path";
import { Hono, type MiddlewareHandler } from "hono";
import type { RolloutApiAccess } from "../lib/rollout-api/access.ts";
import { TaskRequest as TaskRequestSchema, type TaskResult } from "../protocol/rollout.ts";
import { CallbackSender } from "../lib/rollout-api/callbacks.ts";
import { TaskCatalog } from "../lib/task-catalog.ts";
import { loadTaskCatalog, BUNDLED_TASKS_FILE } from "./api/task-catalog.ts";
import { rolloutRoutes } from "./api/rollout-routes.ts";
import type { CoordinatorLink } from "./agent.ts";
import { joinCoordinator } from "./cluster.ts";
import { announceResult, announceTransitions, newNodeEvents, type NodeEvents } from "./events.ts";
import type { EventBus } from "../lib/events.ts";
import type { MetricsRegistry } from "../lib/metrics.ts";
import { observeNode } from "./observability/observe.ts";
import { createBackend } from "./gateway/backends/index.ts";
import { createGatewayApp } from "./gateway/app.ts";
import { isAdminToken, presentedKey } from "./gateway/auth.ts";
import { GatewayConfig } from "./gateway/config.ts";
import { harnessMounts } from "./harness/sandbox-mounts.ts";
import type { NodeConfig } from "./node-config.ts";
import { nodeBackendOptions, nodeGatewayConfig } from "./gateway-settings.ts";
import { within } from "./pipeline/abortable.ts";
import { InProcessGatewaySessions } from "./pipeline/gateway-adapter.ts";
import { RequirementCheck } from "./eval/requirements.ts";
import { EvaluationStats } from "./eval/stats.ts";
import { runtimePreparer, sandboxHarnessRunner, taskEvaluability, taskEvaluator } from "./pipeline/node-ports.ts";
import { Pipeline } from "./pipeline/pipeline.ts";
import type { HarnessRunner, RolloutEvaluator } from "./pipeline/ports.ts";
import { recoverUnfinished, type RecoveryReport } from "./pipeline/recovery.ts";
import { isApiTask, TaskBook } from "./pipeline/tasks.ts";
import { createSandboxPool } from "./runtime/pool.ts";
import { openRuntime } from "./runtime/registry.ts";
import { sandboxPolicy, type SandboxPolicy } from "./runtime/sandbox-policy.ts";
import type { Mount, SandboxRuntime } from "./runtime/types.ts";
import { openNodeStore } from "./store/db.ts";
import { RolloutsRepo } from "./store/rollouts-repo.ts";
import { describeStoreError } from "../lib/store-errors.ts";
import { StoreHealth } from "./store/store-health.ts";

/** How long stop() waits for callbacks still being delivered. */
const CALLBACK_GRACE_MS = 5_000;
/** How often finished tasks past their retention are pruned. */
const PRUNE_EVERY_MS = 10 * 60_000;

export interface NodeParts {
  /** Default: the runtime named by config.runtime. */
  runtime?: SandboxRuntime;
  runner?: HarnessRunner;
  evaluator?: RolloutEvaluator;
  catalog?: TaskCatalog;
  /** Host paths every sandbox gets besides the harness mounts (a toolchain; in tests, a python without pytest). */
  mounts?: Mount[];
}

export interface RunningNode {
  url: string;
  /** Who may call the rollout API (for the startup line). */
  rolloutAccess: RolloutApiAccess;
  config: NodeConfig;
  runtime: SandboxRuntime;
  pipeline: Pipeline;
  tasks: TaskBook;
  recovery: RecoveryReport;
  /** What the node does, as typed events (rollout transitions and results, coordinator link). */
  events: EventBus<NodeEvents>;
  /** Set when the node joined a coordinator. */
  link: CoordinatorLink | undefined;
  /** The Prometheus registry /metrics renders. */
  metrics: MetricsRegistry;
  /** Resolves when every callback started so far has been delivered or given up. */
  callbacksSettled(): Promise<void>;
  stop(): Promise<void>;
}

/** The operator's sandbox policy: the configured host-path roots, or the task file's folder. */
function nodeSandboxPolicy(config: NodeConfig): SandboxPolicy {
  const taskFile = config.tasks === "" ? undefined : (config.tasks ?? BUNDLED_TASKS_FILE);
  return sandboxPolicy({
    hostPathRoots: config.sandbox.host_path_roots ?? (taskFile ? [dirname(resolve(taskFile))] : []),
    allowHostNetwork: config.sandbox.allow_host_network,
    allowCapAdd: config.sandbox.allow_cap_add,
  });
}

const ADMIN_REQUIRED = { error: { code: "unauthorized", message: "the admin token is required" } };

/** The rollout API's gate: open (loopback only, checked by the config), or the rollout or admin token; the node token is another role's. */
function nodeRolloutAccess(config: NodeConfig): RolloutApiAccess {
  if (config.open_rollout_api) return { open: true };
  return {
    open: false,
    rolloutToken: config.rollout_token!,
    adminToken: config.admin_token,
    otherRoles: config.coordinator ? { node: config.coordinator.token } : {},
  };
}

/** `metrics_require_admin_token`: /metrics answers 401 without the admin token. */
function adminOnly(adminToken: string): MiddlewareHandler {
  return async (c, next) => (isAdminToken(presentedKey(c.req.raw.headers), adminToken) ? next() : c.json(ADMIN_REQUIRED, 401));
}

export async function startNode(config: NodeConfig, parts: NodeParts = {}): Promise<RunningNode> {
  const policy = nodeSandboxPolicy(config);
  const limits = { pids: config.sandbox.pids_limit, diskMb: config.sandbox.disk_mb };
  const store = await openNodeStore(config.db);
  const repo = new RolloutsRepo(store.db);
  const storeHealth = new StoreHealth(config.db);
  const backend = createBackend(config.engine.backend, nodeBackendOptions(config));
  const gatewayConfig = GatewayConfig.parse(nodeGatewayConfig(config));
  const events = newNodeEvents();
  const gateway = createGatewayApp({
    config: gatewayConfig,
    store,
    backend,
    onCall: (call) => events.emit("gateway.call", { ...call, at: Date.now() }),
    onCallNotStored: (err, sessionId) => void storeHealth.failed(err, "recording an LLM call", { gateway_session_id: sessionId }),
  });

  const runtime = parts.runtime ?? (await openRuntime(config.runtime, { policy, limits }));
  const recovery = await recoverUnfinished(repo, config.node_id, () => runtime.removeLeftovers(config.node_id));
  const pool = createSandboxPool({
    runtime,
    nodeId: config.node_id,
    mounts: [...harnessMounts(), ...(parts.mounts ?? [])],
    maxReadyPerKey: config.pool.max_ready_per_key,
    maxConcurrentStarts: config.pool.max_concurrent_starts,
  });
  const catalog = parts.catalog ?? (config.tasks === "" ? TaskCatalog.empty() : await loadTaskCatalog(config.tasks ?? BUNDLED_TASKS_FILE));

  const defaultRuntime = config.default_image ? { image: config.default_image } : undefined;
  // Each task's evaluation needs (pytest, node…), probed once per image in a sandbox of the pool;
  // a node given its own evaluator (tests) judges by other rules.
  const requirements = new RequirementCheck({ source: pool, backend: runtime.backend, ...(defaultRuntime ? { defaultRuntime } : {}) });
  const evaluability = parts.evaluator ? undefined : taskEvaluability(requirements, (id) => catalog.get(id));
  const evaluationStats = new EvaluationStats();

  // A task's TaskResult goes to its callback_url once (cancelled tasks only with callback.on_cancel);
  // it is marked done once delivered or given up, so a restart resends only what was owed.
  const sender = new CallbackSender({ attempts: config.callback.attempts, baseDelayMs: config.callback.base_delay_ms });
  const callbacks = new Set<Promise<void>>();
  const sending = new Set<string>();
  const sendCallback = (result: TaskResult, request: TaskRequestSchema) => {
    if (sending.has(result.task_id)) return;
    sending.add(result.task_id);
    const wanted = request.callback_url && (result.status !== "cancelled" || config.callback.on_cancel);
    const work = (async () => {
      if (wanted) await sender.send(request.callback_url!, result);
      await repo.markCallbackDone(result.task_id);
    })().catch((err) =>
      console.error(
        JSON.stringify({ level: "error", event: "callback_record_failed", task_id: result.task_id, error: err instanceof Error ? err.name : typeof err }),
      ),
    );
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
      ...(defaultRuntime ? { defaultRuntime } : {}),
    },
    {
      store: repo,
      pool,
      preparer: runtimePreparer,
      gateway: new InProcessGatewaySessions(gateway.sessions),
      runner: parts.runner ?? sandboxHarnessRunner({ defaultModel: config.engine.model }),
      evaluator: parts.evaluator ?? taskEvaluator(pool, (id) => catalog.get(id)),
      ...(evaluability ? { evaluability } : {}),
      storeHealth,
      onResult: (result, rollout) => {
        evaluationStats.record(result);
        announceResult(events, result);
        void tasks?.onResult(result).catch((err) =>
          console.error(
            JSON.stringify({
              level: "error",
              event: "task_result_failed",
              task_id: result.task_id,
              session_id: result.session_id,
              error: describeStoreError(err),
            }),
          ),
        );
        link?.onResult(result, rollout.id);
      },
    },
  );
  announceTransitions(pipeline.transitions, events);
  tasks = new TaskBook({
    store: repo,
    storeHealth,
    pipeline,
    onTaskDone: (result, request) => {
      events.emit("task.finished", { task_id: result.task_id, status: result.status, completed_sessions: result.results.length, at: Date.now() });
      sendCallback(result, request);
    },
    onTaskSubmitted: (request, ids) =>
      events.emit("task.submitted", {
        task_id: request.task_id,
        harness: request.agent.harness,
        model: request.agent.model_name ?? null,
        num_samples: request.num_samples,
        session_ids: ids,
        at: Date.now(),
      }),
    onTaskProgress: (taskId, completed, total) =>
      events.emit("task.progressed", { task_id: taskId, completed_sessions: completed, total_sessions: total, at: Date.now() }),
  });
  await tasks.load();

  let draining = false;
  const observability = observeNode({
    nodeId: config.node_id,
    adminToken: config.admin_token,
    workers: config.workers,
    engines: config.engine.urls,
    events,
    pipeline,
    pool,
    gate: gateway.gate,
    db: store.db,
    rollouts: repo,
    linkStatus: () => (draining ? "draining" : link ? (link.connected ? "connected" : "disconnected") : "standalone"),
  });
  const app = new Hono();
  const access = nodeRolloutAccess(config);
  if (config.metrics_require_admin_token) app.use("/metrics", adminOnly(config.admin_token));
  app.route("/", observability.routes);
  app.route(
    "/",
    rolloutRoutes({
      nodeId: config.node_id,
      access,
      tasks,
      pipeline,
      catalog,
      sandboxPolicy: policy,
      warm: () => pool.warm(),
      isDraining: () => draining,
      storeFailure: () => storeHealth.failing,
      ...(evaluability
        ? { evaluable: async (request: TaskRequestSchema) => (await evaluability.check(request, AbortSignal.timeout(120_000)))?.message ?? null }
        : {}),
      evaluationErrors: () => evaluationStats.snapshot(),
    }),
  );
  const retentionMs = config.task_retention_hours * 3600_000;
  const prune = () =>
    void repo
      .pruneFinishedTasks(new Date(Date.now() - retentionMs).toISOString())
      .catch((err) => console.error(JSON.stringify({ level: "error", event: "task_prune_failed", error: err instanceof Error ? err.name : typeof err })));
  prune();
  const pruner = setInterval(prune, PRUNE_EVERY_MS);
  app.post("/v1/admin/drain", (c) => {
    if (!isAdminToken(presentedKey(c.req.raw.headers), config.admin_token)) return c.json(ADMIN_REQUIRED, 401);
    draining = true;
    return c.json({ draining, live_rollouts: pipeline.liveRollouts().length });
  });
  app.route("/", gateway.app);

  if (config.coordinator) {
    link = joinCoordinator({
      coordinator: config.coordinator,
      dbPath: config.db,
      nodeId: config.node_id,
      workers: config.workers,
      engines: config.engine.urls,
      db: store.db,
      rollouts: repo,
      pipeline,
      pool,
      gate: gateway.gate,
      catalog,
      events,
      drain: () => void (draining = true),
    });
  }

  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    fetch: app.fetch,
    idleTimeout: 0,
    maxRequestBodySize: gatewayConfig.maxBodyBytes + 64 * 1024,
  });
  const url = `http://${config.host}:${server.port}`;
  gateway.setBaseUrl(url);
  // Tasks that finished before a crash but whose callback was not delivered.
  for (const row of await repo.pendingCallbacks()) {
    const status = isApiTask(row.taskId) ? await tasks.status(row.taskId) : undefined;
    const request = TaskRequestSchema.safeParse(row.request);
    if (status && request.success) sendCallback({ task_id: status.task_id, status: status.status, results: status.results, result_paths: [] }, request.data);
  }

  return {
    url,
    rolloutAccess: access,
    config,
    runtime,
    pipeline,
    tasks,
    recovery,
    events,
    metrics: observability.metrics,
    callbacksSettled: async () => {
      await Promise.all([...callbacks]);
    },
    link,
    async stop() {
      draining = true;
      clearInterval(pruner);
      observability.stop();
      await link?.stop();
      await pipeline.close();
      // A callback still retrying is resent at the next start (its task is not marked delivered).
      await within(Promise.all([...callbacks]), CALLBACK_GRACE_MS);
      sender.stop();
      await server.stop(true);
      await pool.close();
      gateway.close();
      storeHealth.stop();
      store.close();
    },
  };
}
