// Why: the node's pipeline opens and closes gateway sessions as a library call, not over HTTP,
// and gives each rollout its own unix socket; this service does both through the gateway app's
// own session routes (in process), so it adds no second code path to the session store.
import type { Hono } from "hono";
import { SessionInfo } from "../../protocol/sessions.ts";
import { PolarError } from "../../protocol/errors.ts";
import { serveSessionSocket, type SessionSocket } from "./session-socket.ts";

export interface OpenSessionOptions {
  metadata?: Record<string, unknown>;
  /** Serve this session's LLM routes, and only them, on a new unix socket here. */
  socketPath?: string;
}

export interface OpenedSession {
  id: string;
  token: string;
  /** The gateway's TCP base URLs (for harnesses on the host or with `network: "host"`). */
  openaiBaseUrl: string;
  anthropicBaseUrl: string;
  socket?: SessionSocket;
  /** Closes the socket and revokes the token; the recorded calls stay. Idempotent. */
  close(): Promise<void>;
}

export interface SessionService {
  open(options?: OpenSessionOptions): Promise<OpenedSession>;
}

export interface SessionServiceDeps {
  app: Hono;
  adminToken: string;
  maxBodyBytes: number;
}

export function createSessionService(deps: SessionServiceDeps): SessionService {
  const call = async (path: string, body: unknown): Promise<unknown> => {
    const response = await deps.app.fetch(
      new Request(`http://gateway${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${deps.adminToken}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
    );
    const parsed: unknown = await response.json();
    if (!response.ok) throw new PolarError("internal", `gateway ${path} answered ${response.status}: ${JSON.stringify(parsed)}`);
    return parsed;
  };

  return {
    async open(options = {}) {
      const info = SessionInfo.parse(await call("/v1/sessions", { metadata: options.metadata ?? {} }));
      if (!info.token) throw new PolarError("internal", "the gateway created a session without a token");
      const token = info.token;
      let socket: SessionSocket | undefined;
      try {
        if (options.socketPath) socket = await serveSessionSocket({ app: deps.app, token, adminToken: deps.adminToken, path: options.socketPath, maxBodyBytes: deps.maxBodyBytes });
      } catch (err) {
        await call(`/v1/sessions/${info.id}/close`, {});
        throw err;
      }
      let closed = false;
      return {
        id: info.id,
        token,
        openaiBaseUrl: info.openai_base_url,
        anthropicBaseUrl: info.anthropic_base_url,
        ...(socket ? { socket } : {}),
        async close() {
          if (closed) return;
          closed = true;
          await socket?.close();
          await call(`/v1/sessions/${info.id}/close`, {});
        },
      };
    },
  };
}

/** The session service of a gateway started with startGateway (the node agent's, the tests'). */
export function sessionServiceOf(gateway: { app: Hono; config: { adminToken: string; maxBodyBytes: number } }): SessionService {
  return createSessionService({ app: gateway.app, adminToken: gateway.config.adminToken, maxBodyBytes: gateway.config.maxBodyBytes });
}
