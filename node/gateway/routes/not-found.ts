// Why: a client that calls a path the gateway does not serve gets the 404 in the shape of the API
// it speaks (OpenAI under /v1/chat and /v1/responses, Anthropic under /v1/messages, the admin
// shape elsewhere), so its SDK raises a NotFoundError instead of failing to read the body; an
// error a route lets escape is answered the same way (with a fixed message, see asPolarError).
import type { Context } from "hono";
import { asPolarError, PolarError } from "../../../protocol/errors.ts";
import type { Dialect } from "../dialects/dialect.ts";
import { anthropicDialect, chatDialect, responsesDialect } from "../dialects/index.ts";
import { adminError } from "./admin-guard.ts";

/** `/s/<token>` in front of an LLM path: stripped, and never echoed back. */
const SESSION_PREFIX = /^\/s\/[^/]+(?=\/|$)/;

/** The dialect whose error shape a path falls under; undefined for the admin/JSON API. */
export function dialectOfPath(path: string, headers: Headers): Dialect | undefined {
  if (path.startsWith("/v1/messages")) return anthropicDialect;
  if (path.startsWith("/v1/chat/") || path === "/v1/chat") return chatDialect;
  if (path.startsWith("/v1/responses")) return responsesDialect;
  // /v1/models answers in either shape, told apart by the header Anthropic clients send.
  if (path.startsWith("/v1/models")) return headers.has("anthropic-version") ? anthropicDialect : chatDialect;
  return undefined;
}

export function notFound(c: Context): Response {
  const viaSessionPath = SESSION_PREFIX.test(c.req.path);
  const path = c.req.path.replace(SESSION_PREFIX, "");
  return answerInPathShape(c, new PolarError("not_found", `no route ${c.req.method} ${viaSessionPath ? "/s/…" : ""}${path}`));
}

/** Answers `err` in the error shape of the API the request's path belongs to (and logs it). */
export function answerInPathShape(c: Context, err: unknown): Response {
  const dialect = dialectOfPath(c.req.path.replace(SESSION_PREFIX, ""), c.req.raw.headers);
  if (!dialect) return adminError(c, err);
  const error = asPolarError(err);
  c.get("requestLog")?.failed(error);
  const { status, body } = dialect.renderError(error);
  return c.json(body as object, status as 404);
}
