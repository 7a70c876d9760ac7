// Why: a sandboxed harness reaches the gateway through a unix socket that serves its own
// session's LLM routes and nothing else, so an agent that finds another session's token, the
// admin token or the session API's address still cannot use them through its sandbox. The
// socket is created (unlinked, bound, chmodded — as the node's user, often root) in a host folder
// only the node writes, which the sandbox sees read-only (Sandbox.hostGatewayDir): never in a
// folder the sandbox can write, where a planted symlink would send all three to a host path.
import { tokenMatches } from "../../lib/tokens.ts";
import { chmod, lstat, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { Hono } from "hono";
import { PolarError } from "../../protocol/errors.ts";
import { GATEWAY_SOCKET_NAME } from "../runtime/types.ts";
import { isAdminToken, presentedKey } from "./auth.ts";
import type { Dialect } from "./dialects/dialect.ts";
import { DIALECT_ENDPOINTS, anthropicDialect, chatDialect } from "./dialects/index.ts";

export interface SessionSocket {
  path: string;
  close(): Promise<void>;
}

/** The dialect an LLM route answers in, or undefined for anything that is not an LLM route. */
function llmRouteDialect(request: Request, path: string): Dialect | undefined {
  if (request.method === "POST") {
    if (path === "/v1/messages/count_tokens") return anthropicDialect;
    return DIALECT_ENDPOINTS.find((e) => e.path === path)?.dialect;
  }
  if (request.method === "GET" && path === "/v1/models") return request.headers.has("anthropic-version") ? anthropicDialect : chatDialect;
  return undefined;
}

function refuse(dialect: Dialect | undefined, error: PolarError): Response {
  if (!dialect) return Response.json({ error: { code: error.code, message: error.message } }, { status: error.status });
  const { status, body } = dialect.renderError(error);
  return Response.json(body, { status });
}

/** Decides whether a request may pass to the gateway app; a Response refuses it. */
export function sessionSocketGuard(token: string, adminToken: string) {
  return (request: Request): Response | undefined => {
    const path = new URL(request.url).pathname;
    const dialect = llmRouteDialect(request, path);
    if (!dialect) {
      const what = path.startsWith("/v1/sessions") ? "the session API" : path.startsWith("/v1/admin") ? "the admin API" : `${request.method} ${path}`;
      return refuse(undefined, new PolarError("forbidden", `${what} is not served on a rollout's socket`));
    }
    const key = presentedKey(request.headers);
    if (!key) return refuse(dialect, new PolarError("unauthorized", "missing API key: send the session token as a Bearer token or x-api-key"));
    if (isAdminToken(key, adminToken) || !tokenMatches(key, token)) {
      return refuse(dialect, new PolarError("forbidden", "this socket serves one session only; the key presented is not its token"));
    }
    return undefined;
  };
}

export interface SessionSocketOptions {
  app: Hono;
  token: string;
  adminToken: string;
  /** A host folder only the node writes (Sandbox.hostGatewayDir); the socket is GATEWAY_SOCKET_NAME in it. */
  folder: string;
  maxBodyBytes: number;
}

/**
 * The socket's path in `folder`, once the folder is known to be a real folder (not a symlink) and
 * whatever was at the path is gone — a stale socket of an earlier life; anything else is refused.
 */
async function socketPathIn(folder: string): Promise<string> {
  const info = await lstat(folder).catch(() => undefined);
  if (!info?.isDirectory()) throw new PolarError("internal", `the gateway socket's folder ${folder} is not a folder (or is a symlink)`);
  const path = join(folder, GATEWAY_SOCKET_NAME);
  const stale = await lstat(path).catch(() => undefined);
  if (stale && !stale.isSocket()) throw new PolarError("internal", `${path} exists and is not a socket; refusing to replace it`);
  if (stale) await unlink(path);
  return path;
}

/** Serves one session's LLM routes of `app` on a new unix socket in `options.folder`. */
export async function serveSessionSocket(options: SessionSocketOptions): Promise<SessionSocket> {
  const path = await socketPathIn(options.folder);
  const guard = sessionSocketGuard(options.token, options.adminToken);
  const server = Bun.serve({
    // Bun's types allow idleTimeout only with a port, but it applies to unix sockets too: the
    // default 10 s cuts a silent engine call (measured), 0 keeps it open for minutes.
    ...({ idleTimeout: 0 } as object),
    unix: path,
    maxRequestBodySize: options.maxBodyBytes + 64 * 1024,
    fetch: (request) => guard(request) ?? options.app.fetch(request),
  });
  // Any user inside the sandbox may connect: the folder holding it is this sandbox's, and only
  // the node writes in it, so nothing can have replaced the socket since it was bound.
  await chmod(path, 0o666);
  let closed = false;
  return {
    path,
    async close() {
      if (closed) return;
      closed = true;
      await server.stop(true);
      await unlink(path).catch(() => {});
    },
  };
}
