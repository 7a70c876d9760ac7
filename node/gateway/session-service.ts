// Why: the gateway's sessions as a library — create, open with a rollout's own unix socket,
// inspect, close, delete, rebuild the trajectory, count recorded failures — one typed service the
// node's pipeline calls directly (no HTTP, no admin token, no JSON in between) and the session
// routes (routes/sessions.ts) expose over HTTP as a thin shell.
import type { Hono } from "hono";
import type { RecordedCall } from "../../protocol/calls.ts";
import type { SessionInfo, SessionTrajectory } from "../../protocol/sessions.ts";
import type { Strategy } from "../../protocol/trace.ts";
import { PolarError, type ErrorCode } from "../../protocol/errors.ts";
import type { CallsRepo } from "../store/calls-repo.ts";
import type { SessionRow, SessionsRepo } from "../store/sessions-repo.ts";
import type { CallPath } from "./call-path.ts";
import { serveSessionSocket, type SessionSocket } from "./session-socket.ts";
import type { TrajectoryService } from "./trajectory-service.ts";
import type { RebuildOptions } from "../trajectory/index.ts";

export interface OpenSessionOptions {
  metadata?: Record<string, unknown>;
  /**
   * Serve this session's LLM routes, and only them, on a new unix socket in this host folder — one
   * only the node writes (Sandbox.hostGatewayDir; see session-socket.ts).
   */
  socketFolder?: string;
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
  /** A new session and its token (shown once: it is stored hashed). */
  create(metadata?: Record<string, unknown>): Promise<SessionInfo>;
  /** A new session for one rollout, with its own socket when asked. */
  open(options?: OpenSessionOptions): Promise<OpenedSession>;
  info(id: string): Promise<SessionInfo>;
  /** Revokes the token (no new calls) and frees the session's caches; keeps the recorded calls. */
  close(id: string): Promise<SessionInfo>;
  /** Deletes the session and its recorded calls. */
  delete(id: string): Promise<void>;
  calls(id: string): Promise<RecordedCall[]>;
  trajectory(id: string, strategy: Strategy, options?: Pick<RebuildOptions, "maxContextDrift">): Promise<SessionTrajectory>;
  /** Recorded calls that failed, by error code (a count in the store: no call is read). */
  failureCounts(id: string): Promise<Partial<Record<ErrorCode, number>>>;
}

export interface SessionServiceDeps {
  sessions: SessionsRepo;
  calls: CallsRepo;
  callPath: CallPath;
  trajectories: TrajectoryService;
  /** The gateway's base URL as clients reach it. */
  baseUrl: () => string;
  /** What a session's socket serves (the gateway app) and its limits. */
  socketApp: () => Hono;
  adminToken: string;
  maxBodyBytes: number;
}

export function createSessionService(deps: SessionServiceDeps): SessionService {
  const urls = (token?: string) => {
    const base = deps.baseUrl();
    const prefix = token ? `${base}/s/${token}` : base;
    return { openai_base_url: `${prefix}/v1`, anthropic_base_url: prefix };
  };
  const describe = async (row: SessionRow, token?: string): Promise<SessionInfo> => ({
    id: row.id,
    ...(token ? { token } : {}),
    ...urls(token),
    metadata: row.metadata,
    created_at: row.createdAt,
    closed_at: row.closedAt,
    call_count: await deps.calls.count(row.id),
  });
  const mustGet = async (id: string): Promise<SessionRow> => {
    const row = await deps.sessions.get(id);
    if (!row) throw new PolarError("not_found", `no session ${id}`);
    return row;
  };
  const revoke = async (id: string): Promise<void> => {
    await deps.sessions.close(id);
    deps.callPath.forget(id);
  };

  return {
    async create(metadata = {}) {
      const { row, token } = await deps.sessions.create(metadata);
      return describe(row, token);
    },

    async open(options = {}) {
      const { row, token } = await deps.sessions.create(options.metadata ?? {});
      let socket: SessionSocket | undefined;
      try {
        if (options.socketFolder)
          socket = await serveSessionSocket({
            app: deps.socketApp(),
            token,
            adminToken: deps.adminToken,
            folder: options.socketFolder,
            maxBodyBytes: deps.maxBodyBytes,
          });
      } catch (err) {
        await revoke(row.id);
        throw err;
      }
      const base = urls(token);
      let closed = false;
      return {
        id: row.id,
        token,
        openaiBaseUrl: base.openai_base_url,
        anthropicBaseUrl: base.anthropic_base_url,
        ...(socket ? { socket } : {}),
        async close() {
          if (closed) return;
          closed = true;
          await socket?.close();
          await revoke(row.id);
        },
      };
    },

    info: async (id) => describe(await mustGet(id)),

    async close(id) {
      await mustGet(id);
      await revoke(id);
      return describe(await mustGet(id));
    },

    async delete(id) {
      await mustGet(id);
      await deps.sessions.delete(id);
      deps.callPath.forget(id);
    },

    calls: async (id) => deps.calls.list((await mustGet(id)).id),

    async trajectory(id, strategy, options = {}) {
      await mustGet(id);
      return deps.trajectories.rebuild(id, strategy, options);
    },

    async failureCounts(id) {
      await mustGet(id);
      return deps.calls.errorCounts(id);
    },
  };
}
