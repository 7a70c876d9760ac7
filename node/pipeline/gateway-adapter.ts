// Why: the pipeline's GatewaySessions port over the node's own gateway, called as a library (its
// session service: no HTTP, no admin token, no JSON in between) — a session per rollout with a
// unix socket in the sandbox's gateway folder, its trajectory, and its engine failures counted
// by the store.
import type { TrajectoryResult, Strategy } from "../../protocol/trace.ts";
import type { OpenedSession, SessionService } from "../gateway/session-service.ts";
import { SANDBOX_GATEWAY_SOCKET, type Sandbox } from "../runtime/types.ts";
import type { GatewaySession, GatewaySessions } from "./ports.ts";

/** Codes of recorded call errors that mean no engine answered (an infrastructure failure). */
const ENGINE_DOWN_CODES = ["engine_unavailable", "engine_timeout"] as const;

export class InProcessGatewaySessions implements GatewaySessions {
  private readonly open_ = new Map<string, OpenedSession>();

  constructor(private readonly sessions: SessionService) {}

  async open(input: { rolloutId: string; sandbox: Sandbox; metadata: Record<string, unknown> }): Promise<GatewaySession> {
    const opened = await this.sessions.open({ metadata: input.metadata, socketFolder: input.sandbox.hostGatewayDir });
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
    const { traces, stats } = await this.sessions.trajectory(sessionId, strategy);
    return { traces, stats };
  }

  async engineFailures(sessionId: string): Promise<number> {
    const counts = await this.sessions.failureCounts(sessionId);
    return ENGINE_DOWN_CODES.reduce((n, code) => n + (counts[code] ?? 0), 0);
  }
}
