// Why: every Polar service fails in one closed vocabulary of codes, and each API answers errors
// in one body shape (the admin/JSON shape, OpenAI's, Anthropic's); defining the codes, the one
// error type both services throw (PolarError) and the shapes once lets the gateway, the
// coordinator and clients agree on them. Each transport maps a PolarError in one place here:
// HTTP admin body, WebSocket error frame, FastAPI `detail`.
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

const HTTP_STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  too_large: 413,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  context_length: 400,
  engine_unavailable: 502,
  engine_timeout: 504,
  engine_error: 502,
  overloaded: 529,
  // nginx's "client closed request": never reaches a client, but logs and records read it.
  client_closed: 499,
  internal: 500,
};

/**
 * Whether the same request may succeed if sent again unchanged: the engine or the service was
 * busy, slow or briefly broken. Everything a client must change first (its input, credential,
 * the resource's state) is not retryable.
 */
const RETRYABLE: Record<ErrorCode, boolean> = {
  bad_request: false,
  too_large: false,
  unauthorized: false,
  forbidden: false,
  not_found: false,
  conflict: false,
  context_length: false,
  engine_unavailable: true,
  engine_timeout: true,
  engine_error: false,
  overloaded: true,
  client_closed: false,
  internal: true,
};

/** The one error type of the node and the coordinator: a closed code, a message safe to show. */
export class PolarError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "PolarError";
  }

  get status(): number {
    return HTTP_STATUS[this.code];
  }

  get retryable(): boolean {
    return RETRYABLE[this.code];
  }
}

/**
 * Any thrown value as a PolarError. An unknown error becomes `internal` with a fixed message: its
 * own text can hold SQL with a prompt's bytes, a stack trace or an engine's address, none of which
 * may reach a client. The original stays as `cause` (see `describeCause`) for the log.
 */
export function asPolarError(err: unknown): PolarError {
  if (err instanceof PolarError) return err;
  return new PolarError("internal", "internal error", undefined, { cause: err });
}

/** What may be logged of an unknown error: its class, error codes and where it was thrown, never its text. */
export function describeCause(err: unknown): { name: string; codes: string[]; at?: string } | undefined {
  if (err === undefined) return undefined;
  const codes: string[] = [];
  for (let e: unknown = err, hops = 0; e instanceof Error && hops < 5; e = e.cause, hops++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") codes.push(code);
  }
  const name = err instanceof Error ? err.name : typeof err;
  const at =
    err instanceof Error
      ? err.stack
          ?.split("\n")
          .find((l) => l.trim().startsWith("at "))
          ?.trim()
      : undefined;
  return { name, codes, ...(at && { at }) };
}

/** A failure as recorded with a call and as the session/admin API answers it. */
export const PolarErrorObject = z.object({ code: ErrorCode, message: z.string() });
export type PolarErrorObject = z.infer<typeof PolarErrorObject>;

/** Error body of the session, admin and other non-LLM routes (retryability: the HTTP status). */
export const AdminErrorBody = z.object({ error: PolarErrorObject });
export type AdminErrorBody = z.infer<typeof AdminErrorBody>;

/**
 * The `error` frame of both WebSockets (node link, trainer stream). A frame has no status line,
 * so it says itself whether sending the same frame again may succeed; `request_id` names the
 * frame it answers when that frame had one.
 */
export const WsErrorFrame = z.object({
  type: z.literal("error"),
  code: ErrorCode,
  message: z.string(),
  retryable: z.boolean(),
  request_id: z.string().optional(),
});
export type WsErrorFrame = z.infer<typeof WsErrorFrame>;

/** WebSocket close codes of a refused node or trainer hello (coordinator/peer-identities.ts): its secret is missing or wrong, or its id is already connected. */
export const IDENTITY_CLOSE = { unproven: 4003, alreadyConnected: 4009 } as const;

/** FastAPI's error body for anything but a validation failure (Polar's rollout API). */
export const FastApiErrorBody = z.object({ detail: z.string() });
export type FastApiErrorBody = z.infer<typeof FastApiErrorBody>;

/** HTTP admin/JSON transport: the body and its status. */
export function adminErrorResponse(err: PolarError): { body: AdminErrorBody; status: number } {
  return { body: { error: { code: err.code, message: err.message } }, status: err.status };
}

/** WebSocket transport: an `error` frame, answering `requestId` when the failed frame had one. */
export function wsErrorFrame(err: PolarError, requestId?: string): WsErrorFrame {
  return { type: "error", code: err.code, message: err.message, retryable: err.retryable, ...(requestId !== undefined && { request_id: requestId }) };
}

/** FastAPI transport (the rollout API): `{detail}` and its status. */
export function fastApiErrorResponse(err: PolarError): { body: FastApiErrorBody; status: number } {
  return { body: { detail: err.message }, status: err.status };
}

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
