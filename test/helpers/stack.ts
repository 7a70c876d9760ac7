// Why: most gateway, dialect, harness and trajectory tests need the same real stack — the mock
// engine, a gateway on port 0 with a fresh SQLite file, an admin token and a session — so it is
// built in one place.
import { afterEach } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionCalls, type RecordedCall } from "../../protocol/calls.ts";
import { SessionInfo } from "../../protocol/sessions.ts";
import { createBackend } from "../../node/gateway/backends/index.ts";
import type { BackendKind, BackendOptionsInput } from "../../node/gateway/backends/options.ts";
import type { GatewayConfigInput } from "../../node/gateway/config.ts";
import type { LogSink } from "../../node/gateway/request-log.ts";
import { startGateway, type RunningGateway } from "../../node/gateway/server.ts";
import { startMockEngine, type MockEngineOptionsInput, type RunningMockEngine } from "../../node/mock-engine/index.ts";

export const ADMIN_TOKEN = "test-admin-token-0123456789";
export const ENGINE_MODEL = "Qwen/Qwen3-8B";

export interface StackOptions {
  engine?: Partial<MockEngineOptionsInput>;
  backend?: BackendKind;
  backendOptions?: Partial<BackendOptionsInput>;
  gateway?: Partial<GatewayConfigInput>;
  /** Reuse an existing SQLite file (restart tests). */
  db?: string;
  /** Captures the gateway's structured log lines (default: stderr). */
  log?: LogSink;
}

export interface Stack {
  engineUrl: string;
  /** The mock engine itself (its request log tells which engine API the backend used). */
  engine: RunningMockEngine;
  gateway: RunningGateway;
  dbPath: string;
  /** Creates a session through the admin API. */
  session(metadata?: Record<string, unknown>): Promise<SessionInfo & { token: string }>;
  calls(sessionId: string): Promise<RecordedCall[]>;
  admin(path: string, init?: RequestInit): Promise<Response>;
  /** Stops the gateway only (the engine and the db file stay). */
  stopGateway(): Promise<void>;
  stop(): Promise<void>;
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const dir = options.db ? undefined : mkdtempSync(join(tmpdir(), "polar-stack-"));
  const dbPath = options.db ?? join(dir!, "gateway.db");
  const engine = await startMockEngine({ port: 0, model: ENGINE_MODEL, ...options.engine });
  // Like a real deployment, the gateway sends the engine's served model name, whatever the harness asks for.
  let gateway: RunningGateway;
  try {
    const backend = createBackend(options.backend ?? "vllm", {
      urls: [engine.url],
      model: ENGINE_MODEL,
      retries: 0,
      timeoutMs: 30_000,
      ...options.backendOptions,
    });
    gateway = await startGateway({ port: 0, db: dbPath, adminToken: ADMIN_TOKEN, ...options.gateway }, backend, { log: options.log });
  } catch (err) {
    await engine.stop(); // a bad option must not leave the engine listening
    throw err;
  }

  const admin = (path: string, init: RequestInit = {}) =>
    fetch(`${gateway.url}${path}`, { ...init, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json", ...init.headers } });

  let gatewayStopped = false;
  return {
    engineUrl: engine.url,
    engine,
    gateway,
    dbPath,
    async session(metadata = {}) {
      const res = await admin("/v1/sessions", { method: "POST", body: JSON.stringify({ metadata }) });
      if (res.status !== 201) throw new Error(`session create failed: ${res.status} ${await res.text()}`);
      const info = SessionInfo.parse(await res.json());
      if (info.token === undefined) throw new Error("session create answered no token");
      return { ...info, token: info.token };
    },
    async calls(sessionId) {
      const res = await admin(`/v1/sessions/${sessionId}/calls`);
      if (!res.ok) throw new Error(`calls failed: ${res.status} ${await res.text()}`);
      return SessionCalls.parse(await res.json()).calls;
    },
    admin,
    async stopGateway() {
      if (!gatewayStopped) await gateway.stop();
      gatewayStopped = true;
    },
    async stop() {
      if (!gatewayStopped) await gateway.stop();
      gatewayStopped = true;
      await engine.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A `startStack` for one test file: every stack it starts is stopped after each test. */
export function stackPerTest(): (options?: StackOptions) => Promise<Stack> {
  const stacks: Stack[] = [];
  afterEach(async () => {
    for (const s of stacks.splice(0)) await s.stop();
  });
  return async (options) => {
    const s = await startStack(options);
    stacks.push(s);
    return s;
  };
}
