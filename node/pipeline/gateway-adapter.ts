// Why: the pipeline's GatewaySessions port over the in-process gateway — sessions opened through
// its session service with a per-rollout unix socket in the sandbox's run folder, trajectories
// and recorded calls read through the gateway app's own admin routes (no second store path).
import { join } from "node:path";
import type { Hono } from "hono";
import { z } from "zod";
import { TrajectoryResult, type Strategy } from "../../protocol/trace.ts";
import { PolarError } from "../../protocol/errors.ts";
import type { OpenedSession, SessionService } from "../gateway/session-service.ts";
import { SANDBOX_RUN_DIR, type Sandbox } from "../runtime/types.ts";
import type { GatewaySession, GatewaySessions } from "./ports.ts";

/** The socket's name inside a sandbox's run folder (SANDBOX_RUN_DIR inside the sandbox). */
export const GATEWAY_SOCKET_NAME = "gateway.sock";
export const SANDBOX_GATEWAY_SOCKET = `${SANDBOX_RUN_DIR}/${GATEWAY_SOCKET_NAME}`;

/** Codes of recorded call errors that mean no engine answered (an infrastructure failure). */
const ENGINE_DOWN_CODES = new Set(["engine_unavailable", "engine_timeout"]);
const CallErrors = z.object({ calls: z.array(z.looseObject({ error: z.object({ code: z.string() }).nullable().optional() })) });

export interface GatewayAdapterDeps {
  app: Hono;
  sessions: SessionService;
  adminToken: string;
}

export class InProcessGatewaySessions implements GatewaySessions {
  private readonly open_ = new Map<string, OpenedSession>();

  constructor(private readonly deps: GatewayAdapterDeps) {}

  async open(input: { rolloutId: string; sandbox: Sandbox; metadata: Record<string, unknown> }): Promise<GatewaySession> {
    const opened = await this.deps.sessions.open({ metadata: input.metadata, socketPath: join(input.sandbox.hostRunDir, GATEWAY_SOCKET_NAME) });
    this.open_.set(opened.id, opened);
    return {
      id: opened.id,
      endpoint: { openaiBaseUrl: opened.openaiBaseUrl, anthropicBaseUrl: opened.anthropicBaseUrl, token: opened.token },
      ...(opened.socket ? { socketPath: opened.socket.path, sandboxSocketPath: SANDBOX_GATEWAY_SOCKET } : {}),
    };
  }

  async close(sessionId: string): Promise<void> {
    const opened = this.open_.get(sessionId);
    this.open_.delete(sessionId);
    await opened?.close();
  }

  async trajectory(sessionId: string, strategy: Strategy): Promise<TrajectoryResult> {
    return TrajectoryResult.parse(await this.get(`/v1/sessions/${sessionId}/trajectory?strategy=${strategy}`));
  }

  async engineFailures(sessionId: string): Promise<number> {
    const { calls } = CallErrors.parse(await this.get(`/v1/sessions/${sessionId}/calls`));
    return calls.filter((c) => c.error && ENGINE_DOWN_CODES.has(c.error.code)).length;
  }

  private async get(path: string): Promise<unknown> {
    const response = await this.deps.app.fetch(new Request(`http://gateway${path}`, { headers: { authorization: `Bearer ${this.deps.adminToken}` } }));
    const body: unknown = await response.json();
    if (!response.ok) throw new PolarError("internal", `gateway ${path} answered ${response.status}: ${JSON.stringify(body).slice(0, 500)}`);
    return body;
  }
}
