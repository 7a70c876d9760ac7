// Why: the SDK-fidelity tests of both OpenAI dialects wire the official `openai` client, through
// its custom `fetch`, to a dialect's parse and render instead of a server: the SDK's own request
// goes through parseRequest, and its own parsers read what the dialect renders.
import OpenAI from "openai";
import type { PolarError } from "../../../protocol/errors.ts";
import type { PivotRequest, PivotResponse } from "../../../node/gateway/pivot.ts";
import type { Dialect } from "../../../node/gateway/dialects/dialect.ts";

export const SSE_HEADERS = { "content-type": "text/event-stream" };

function client(fetch: (url: string | URL | Request, init?: RequestInit) => Promise<Response>): OpenAI {
  return new OpenAI({ apiKey: "sk-test", baseURL: "http://127.0.0.1:9/v1", maxRetries: 0, fetch });
}

/** A client whose every request is parsed by `dialect` (and pushed to `seen`) and answered with `response`. */
export function clientAnswering(dialect: Dialect, response: PivotResponse, seen: PivotRequest[] = []): OpenAI {
  return client(async (_url, init) => {
    const request = dialect.parseRequest(JSON.parse(String(init?.body)));
    seen.push(request);
    if (request.stream) return new Response(dialect.renderStream(response, request).join(""), { headers: SSE_HEADERS });
    return Response.json(dialect.renderResponse(response, request));
  });
}

/** A client whose every request fails with `error`, as an HTTP error or (stream) in-stream. */
export function clientFailing(dialect: Dialect, error: PolarError, stream = false): OpenAI {
  return client(async () => {
    if (stream) return new Response(dialect.renderStreamError(error).join(""), { headers: SSE_HEADERS });
    const { status, body } = dialect.renderError(error);
    return Response.json(body, { status });
  });
}
