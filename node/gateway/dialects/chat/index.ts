// Why: the OpenAI Chat Completions dialect (`POST /v1/chat/completions`), assembled from its
// parser, renderer and the shared OpenAI error shape.
import type { PolarError } from "../../../../protocol/errors.ts";
import { sseFrame, type Dialect } from "../dialect.ts";
import { openAiErrorObject, renderOpenAiError } from "../openai-errors.ts";
import { parseChatRequest } from "./parse.ts";
import { renderChatResponse, renderChatStream } from "./render.ts";

const PROMPT_PARAM = "messages";

export const chatDialect: Dialect = {
  name: "chat",
  parseRequest: parseChatRequest,
  renderResponse: (response) => renderChatResponse(response),
  renderStream: renderChatStream,
  renderError: (error: PolarError) => renderOpenAiError(error, PROMPT_PARAM),
  // The SDK raises an APIError on a data frame carrying `error`; `[DONE]` ends the stream for
  // clients that wait for it.
  renderStreamError: (error: PolarError) => [sseFrame({ error: openAiErrorObject(error, PROMPT_PARAM) }), sseFrame("[DONE]")],
};
