// Why: assembles the gateway from its parts (auth, policy gate, call path, routes) around a
// store and a backend passed in, so tests, the CLI and the node agent build the same gateway
// without any module opening sockets or files on import.
import { Hono } from "hono";
import type { Health } from "../../protocol/admin.ts";
import type { OpenedStore } from "../store/db.ts";
import { CallsRepo } from "../store/calls-repo.ts";
import { SessionsRepo } from "../store/sessions-repo.ts";
import { SessionAuth } from "./auth.ts";
import type { Backend } from "./backends/backend.ts";
import { CallPath, type CommittedCall } from "./call-path.ts";
import type { GatewayConfig } from "./config.ts";
import { CacheBudget } from "../cache-budget.ts";
import { promptTokenCounter } from "./model-tokenizer.ts";
import { PolicyGate } from "./policy-gate.ts";
import { requestLogging, stderrLogSink, type LogSink } from "./request-log.ts";
import { adminRoutes } from "./routes/admin.ts";
import { llmRoutes } from "./routes/llm.ts";
import { answerInPathShape, notFound } from "./routes/not-found.ts";
import { sessionRoutes } from "./routes/sessions.ts";
import { createSessionService, type SessionService } from "./session-service.ts";
import { createTokenCounter } from "./token-counter.ts";
import { TrajectoryService } from "./trajectory-service.ts";

export interface GatewayDeps {
  config: GatewayConfig;
  store: OpenedStore;
  backend: Backend;
  /** Where the structured log lines go (default: stderr, one JSON object a line). */
  log?: LogSink;
  /** Told of every LLM call once it is recorded (metrics, events). */
  onCall?: (call: CommittedCall) => void;
  /** Told of each call the store refused to record (a full disk). */
  onCallNotStored?: (err: unknown, sessionId: string) => void;
}

export interface GatewayApp {
  app: Hono;
  gate: PolicyGate;
  /** The gateway's sessions as a library (what the session routes serve over HTTP). */
  sessions: SessionService;
  /** The byte budget every per-session cache shares. */
  cacheBudget: CacheBudget;
  /** Tells the gateway the base URL clients reach it at (known once the server listens). */
  setBaseUrl(url: string): void;
  /** Releases what the app started lazily (the trajectory worker). */
  close(): void;
}

export function createGatewayApp(deps: GatewayDeps): GatewayApp {
  const { config, store, backend } = deps;
  const sessions = new SessionsRepo(store.db);
  const calls = new CallsRepo(store.db);
  const auth = new SessionAuth(sessions, config.adminToken, config.open);
  const gate = new PolicyGate();
  const callPath = new CallPath(
    backend,
    gate,
    calls,
    { maxTokensCap: config.maxTokensCap, temperature: config.temperature, topP: config.topP, thinking: config.thinking },
    deps.onCall,
    deps.onCallNotStored,
  );
  const bodyLimits = { maxBytes: config.maxBodyBytes, maxDepth: config.maxJsonDepth };
  const cacheBudget = new CacheBudget(config.cacheBytes);
  for (const cache of [sessions, calls, callPath, backend]) cache.shareCacheBudget?.(cacheBudget);
  let baseUrl = config.publicUrl ?? `http://${config.host}:${config.port}`;

  const llm = llmRoutes({
    auth,
    callPath,
    backend,
    tokenCounter: createTokenCounter(backend, config.tokenizer ? promptTokenCounter(config.tokenizer) : undefined),
    streamTiming: { headStartMs: config.streamHeadStartMs, keepAliveMs: config.keepAliveMs },
    bodyLimits,
  });

  const app = new Hono();
  const trajectories = new TrajectoryService(calls, config.tokenizer);
  const service = createSessionService({
    sessions,
    calls,
    callPath,
    trajectories,
    baseUrl: () => baseUrl,
    socketApp: () => app,
    adminToken: config.adminToken,
    maxBodyBytes: config.maxBodyBytes,
  });
  app.use("*", requestLogging(deps.log ?? stderrLogSink));
  app.get("/health", (c) => c.json({ ok: true, policy_version: gate.policyVersion, paused: gate.isPaused } satisfies Health));
  app.route("/v1/sessions", sessionRoutes({ auth, service, bodyLimits }));
  app.route("/v1/admin", adminRoutes(auth, gate, cacheBudget, bodyLimits));
  app.route("/s/:token", llm);
  app.route("/", llm);
  app.notFound(notFound);
  // Anything a route let escape: a fixed message, never the error's own text (asPolarError).
  app.onError((err, c) => answerInPathShape(c, err));

  return {
    app,
    gate,
    sessions: service,
    cacheBudget,
    setBaseUrl(url) {
      if (!config.publicUrl) baseUrl = url;
    },
    close: () => trajectories.close(),
  };
}
