// Why: a sandboxed harness reaches the gateway through a unix socket that serves its own
// session's LLM routes and nothing else, so an agent that finds another session's token, the
// admin token or the session API's address still cannot use them through its sandbox.
import { timingSafeEqual } from "node:crypto";
import { chmod, unlink } from "node:fs/promises";
import type { Hono } from "hono";
import { PolarError } from "../../protocol/errors.ts";
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

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
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
    if (isAdminToken(key, adminToken) || !sameSecret(key, token)) {
      return refuse(dialect, new PolarError("forbidden", "this socket serves one session only; the key presented is not its token"));
    }
    return undefined;
  };
}

/** Serves one session's LLM routes of `app` on a new unix socket at `path`. */
export async function serveSessionSocket(options: { app: Hono; token: string; adminToken: string; path: string; maxBodyBytes: number }): Promise<SessionSocket> {
  await unlink(options.path).catch(() => {}); // a stale socket file from an earlier life
  const guard = sessionSocketGuard(options.token, options.adminToken);
  const server = Bun.serve({
    // Bun's types allow idleTimeout only with a port, but it applies to unix sockets too: the
    // default 10 s cuts a silent engine call (measured), 0 keeps it open for minutes.
    ...({ idleTimeout: 0 } as object),
    unix: options.path,
    maxRequestBodySize: options.maxBodyBytes + 64 * 1024,
    fetch: (request) => guard(request) ?? options.app.fetch(request),
  });
  // Any user inside the sandbox may connect (the folder holding it is the sandbox's own).
  await chmod(options.path, 0o666);
  let closed = false;
  return {
    path: options.path,
    async close() {
      if (closed) return;
      closed = true;
      await server.stop(true);
      await unlink(options.path).catch(() => {});
    },
  };
}
