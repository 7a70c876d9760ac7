// Why: the LLM-facing endpoints a harness calls; each resolves the session, parses the body in
// its dialect, runs the shared call path, and answers (or fails) in that dialect's own shape.
import { Hono, type Context } from "hono";
import { asPolarError } from "../../../protocol/errors.ts";
import type { SessionAuth } from "../auth.ts";
import type { Backend } from "../backends/backend.ts";
import type { CallPath } from "../call-path.ts";
import type { Dialect } from "../dialects/dialect.ts";
import { parseCountTokensRequest, renderCountTokens } from "../dialects/anthropic/index.ts";
import { DIALECT_ENDPOINTS, anthropicDialect, chatDialect } from "../dialects/index.ts";
import { streamedResponse, type StreamTiming } from "../sse-response.ts";
import type { TokenCounter } from "../token-counter.ts";
import { readJson, type BodyLimits } from "./json-body.ts";

export interface LlmRouteDeps {
  auth: SessionAuth;
  callPath: CallPath;
  backend: Backend;
  tokenCounter: TokenCounter;
  streamTiming: StreamTiming;
  bodyLimits: BodyLimits;
}

function fail(c: Context, dialect: Dialect, err: unknown): Response {
  const error = asPolarError(err);
  c.get("requestLog")?.failed(error);
  const { status, body } = dialect.renderError(error);
  return c.json(body as object, status as 400);
}

/** The LLM routes, mounted at `/` (key in a header) and at `/s/:token` (key in the path). */
export function llmRoutes(deps: LlmRouteDeps): Hono {
  const app = new Hono();

  for (const { path, dialect } of DIALECT_ENDPOINTS) {
    app.post(path, async (c) => {
      const log = c.get("requestLog");
      log?.llmCall(dialect.name);
      try {
        const session = await deps.auth.forLlmCall(c.req.param("token"), c.req.raw.headers);
        log?.llmCall(dialect.name, session.id);
        const request = dialect.parseRequest(await readJson(c, deps.bodyLimits));
        const result = deps.callPath.run({ sessionId: session.id, dialect: dialect.name, request, signal: c.req.raw.signal });
        if (request.stream) return await streamedResponse(result, dialect, request, deps.streamTiming, (e) => log?.failedInStream(e));
        return c.json(dialect.renderResponse(await result, request) as object);
      } catch (err) {
        return fail(c, dialect, err);
      }
    });
  }

  app.post("/v1/messages/count_tokens", async (c) => {
    c.get("requestLog")?.llmCall(anthropicDialect.name);
    try {
      await deps.auth.forLlmCall(c.req.param("token"), c.req.raw.headers);
      const request = parseCountTokensRequest(await readJson(c, deps.bodyLimits));
      return c.json(renderCountTokens(await deps.tokenCounter.count(request)));
    } catch (err) {
      return fail(c, anthropicDialect, err);
    }
  });

  app.get("/v1/models", async (c) => {
    const anthropicClient = c.req.header("anthropic-version") !== undefined;
    try {
      await deps.auth.forLlmCall(c.req.param("token"), c.req.raw.headers);
      const ids = await deps.backend.listModels();
      if (anthropicClient) {
        const data = ids.map((id) => ({ type: "model", id, display_name: id, created_at: new Date(0).toISOString() }));
        return c.json({ data, has_more: false, first_id: ids[0] ?? null, last_id: ids.at(-1) ?? null });
      }
      return c.json({ object: "list", data: ids.map((id) => ({ id, object: "model", created: 0, owned_by: "polar" })) });
    } catch (err) {
      return fail(c, anthropicClient ? anthropicDialect : chatDialect, err);
    }
  });

  return app;
}
