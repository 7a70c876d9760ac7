// Why: the Anthropic Messages dialect (`POST /v1/messages`, any query string such as
// `?beta=true`) assembled from its request, response, stream and error mappings.
//
// Mapping decisions (each explained where it is made):
// - system blocks, `role:"system"` messages and text blocks join with "\n" (request.ts);
// - tool_result → one pivot tool message each, before that message's user text; `is_error`
//   becomes an "Error: " prefix; images, documents and redacted_thinking are dropped;
// - custom tools (also `defer_loading` ones) are kept, server tools without input_schema dropped;
// - thinking enabled|adaptive → true, disabled → false, absent → template default;
// - tool arguments that are not a JSON object render as input `{}` (content.ts);
// - the thinking signature is a placeholder, ignored when sent back;
// - context_length → 400 "prompt is too long: N tokens > M maximum" (errors.ts).
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
