// Why: the OpenAI Responses dialect (`POST /v1/responses`, codex's only API), assembled from its
// parser, body and stream renderers and the shared OpenAI error shape.
import type { Dialect } from "../dialect.ts";
import { renderOpenAiError } from "../openai-errors.ts";
import { parseResponsesRequest } from "./parse.ts";
import { PROMPT_PARAM, renderResponsesBody } from "./render.ts";
import { renderResponsesStream, renderResponsesStreamError } from "./stream.ts";

export const responsesDialect: Dialect = {
  name: "responses",
  parseRequest: parseResponsesRequest,
  renderResponse: renderResponsesBody,
  renderStream: renderResponsesStream,
  renderError: (error) => renderOpenAiError(error, PROMPT_PARAM),
  renderStreamError: renderResponsesStreamError,
};
