// Why: Polar's closed error codes mapped once to Anthropic's error shape
// `{type:"error", error:{type, message}}`, as JSON and as an `event: error` SSE frame.
import type { ErrorCode, PolarError } from "../../../errors.ts";
import { ContextLengthDetails, parseContextLength } from "../../backends/engine-errors.ts";
import { type SseFrame, sseFrame } from "../dialect.ts";

export const ANTHROPIC_ERROR_TYPES = [
  "invalid_request_error",
  "authentication_error",
  "permission_error",
  "not_found_error",
  "request_too_large",
  "timeout_error",
  "api_error",
  "overloaded_error",
] as const;
export type AnthropicErrorType = (typeof ANTHROPIC_ERROR_TYPES)[number];

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

export interface AnthropicErrorBody {
  type: "error";
  error: { type: AnthropicErrorType; message: string };
}

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
  const counts = attached.promptTokens !== undefined ? attached : worded;
  const requested = counts.promptTokens === undefined ? undefined : counts.promptTokens + (counts.maxTokens ?? 0);
  const maximum = attached.maxContextTokens ?? worded.maxContextTokens;
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
