// Why: Polar's closed error codes mapped once to Anthropic's error shape
// `{type:"error", error:{type, message}}`, as JSON and as an `event: error` SSE frame.
import { ContextLengthDetails, type AnthropicErrorBody, type AnthropicErrorType, type ErrorCode } from "../../../../protocol/errors.ts";
import type { PolarError } from "../../../../protocol/errors.ts";
import { parseContextLength } from "../../context-length.ts";
import { type SseFrame, sseFrame } from "../dialect.ts";

const ERROR_TYPE: Record<ErrorCode, AnthropicErrorType> = {
  bad_request: "invalid_request_error",
  too_large: "request_too_large",
  unauthorized: "authentication_error",
  forbidden: "permission_error",
  not_found: "not_found_error",
  conflict: "invalid_request_error",
  context_length: "invalid_request_error",
  engine_unavailable: "api_error",
  engine_timeout: "timeout_error",
  engine_error: "api_error",
  overloaded: "overloaded_error",
  client_closed: "invalid_request_error",
  internal: "api_error",
};

/**
 * Claude Code recognises an over-long prompt by Anthropic's exact wording
 * `prompt is too long: N tokens > M maximum`. M is the context window; N is what the request
 * needs (prompt + max_tokens when both are known, since that sum is what overflowed the engine),
 * so N > M always holds. Numbers come from the error details, else from the engine's wording.
 */
export function promptTooLongMessage(error: PolarError): string {
  if (/^prompt is too long/i.test(error.message)) return error.message;
  const parsed = ContextLengthDetails.safeParse(error.details);
  const attached = parsed.success ? parsed.data : {};
  const worded = parseContextLength(error.message);
  // Prompt and completion counts come as a pair from one source, so the sum is never mixed.
  const counts = attached.prompt_tokens !== undefined ? attached : worded;
  const requested = counts.prompt_tokens === undefined ? undefined : counts.prompt_tokens + (counts.max_tokens ?? 0);
  const maximum = attached.max_context_tokens ?? worded.max_context_tokens;
  if (requested !== undefined && maximum !== undefined) return `prompt is too long: ${requested} tokens > ${maximum} maximum`;
  return `prompt is too long: ${error.message}`;
}

export function errorBody(error: PolarError): AnthropicErrorBody {
  const message = error.code === "context_length" ? promptTooLongMessage(error) : error.message;
  return { type: "error", error: { type: ERROR_TYPE[error.code], message } };
}

export function renderAnthropicError(error: PolarError): { status: number; body: AnthropicErrorBody } {
  return { status: error.status, body: errorBody(error) };
}

/** The SDK turns an `event: error` frame into an APIError of the given `error.type`. */
export function renderAnthropicStreamError(error: PolarError): SseFrame[] {
  return [sseFrame(errorBody(error), "error")];
}
