// Why: the Anthropic Messages dialect (`POST /v1/messages`, any query string such as
// `?beta=true`) assembled from its request, response, stream and error mappings.
import type { Dialect } from "../dialect.ts";
import { renderAnthropicError, renderAnthropicStreamError } from "./errors.ts";
import { parseMessagesRequest } from "./request.ts";
import { renderMessage } from "./response.ts";
import { renderMessageStream } from "./stream.ts";

export const anthropicDialect: Dialect = {
  name: "anthropic",
  parseRequest: parseMessagesRequest,
  renderResponse: renderMessage,
  renderStream: renderMessageStream,
  renderError: renderAnthropicError,
  renderStreamError: renderAnthropicStreamError,
};

export { parseCountTokensRequest, renderCountTokens } from "./count-tokens.ts";
export { promptTooLongMessage } from "./errors.ts";
