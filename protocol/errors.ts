// Why: every Polar service fails in one closed vocabulary of codes, and each API answers errors
// in one body shape (the admin/JSON shape, OpenAI's, Anthropic's); defining the codes and the
// shapes once lets the gateway, the coordinator and clients agree on them.
import { z } from "zod";

export const ERROR_CODES = [
  "bad_request", // malformed or invalid input from a client
  "too_large", // a request body over the configured limit
  "unauthorized", // missing / unknown credential
  "forbidden", // a credential used where it does not grant access
  "not_found",
  "conflict", // the resource is in a state that forbids the request (a task id already running, resuming to an older policy version)
  "context_length", // prompt + max tokens exceed the model's context window
  "engine_unavailable", // could not reach any engine (connect errors, 5xx after retries)
  "engine_timeout", // the engine did not answer within the per-call timeout
  "engine_error", // the engine answered with something we cannot use
  "overloaded",
  "client_closed", // the client hung up before the call finished (recorded; nobody is left to answer)
  "internal",
] as const;
export const ErrorCode = z.enum(ERROR_CODES);
export type ErrorCode = z.infer<typeof ErrorCode>;

/** A failure as recorded with a call and as the session/admin API answers it. */
export const PolarErrorObject = z.object({ code: ErrorCode, message: z.string() });
export type PolarErrorObject = z.infer<typeof PolarErrorObject>;

/** Error body of the session, admin and other non-LLM routes. */
export const AdminErrorBody = z.object({ error: PolarErrorObject });
export type AdminErrorBody = z.infer<typeof AdminErrorBody>;

/** OpenAI's error object (Chat Completions and Responses), as the official SDK reads it. */
export const OpenAiErrorObject = z.object({
  message: z.string(),
  type: z.string(),
  param: z.string().nullable(),
  code: z.string().nullable(),
});
export type OpenAiErrorObject = z.infer<typeof OpenAiErrorObject>;

/** OpenAI's error body. */
export const OpenAiErrorBody = z.object({ error: OpenAiErrorObject });
export type OpenAiErrorBody = z.infer<typeof OpenAiErrorBody>;

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
export const AnthropicErrorType = z.enum(ANTHROPIC_ERROR_TYPES);
export type AnthropicErrorType = z.infer<typeof AnthropicErrorType>;

/** Anthropic's error body, as JSON and as the data of an `event: error` SSE frame. */
export const AnthropicErrorBody = z.object({
  type: z.literal("error"),
  error: z.object({ type: AnthropicErrorType, message: z.string() }),
});
export type AnthropicErrorBody = z.infer<typeof AnthropicErrorBody>;

/**
 * Numbers a `context_length` error carries in its details (those the engine named). Dialects
 * read them back to word the overflow the way their clients recognise it.
 */
export const ContextLengthDetails = z.object({
  /** The model's context window. */
  max_context_tokens: z.number().int().nonnegative().optional(),
  /** Tokens of the prompt. */
  prompt_tokens: z.number().int().nonnegative().optional(),
  /** Completion tokens requested (max_tokens). */
  max_tokens: z.number().int().nonnegative().optional(),
});
export type ContextLengthDetails = z.infer<typeof ContextLengthDetails>;
