// Why: one small error type with a closed set of codes, so every layer (dialects, backends,
// store, CLI) speaks the same failure language and each wire format maps it in one place.

export const ERROR_CODES = [
  "bad_request", // malformed or invalid input from a client
  "too_large", // a request body over the configured limit
  "unauthorized", // missing / unknown credential
  "forbidden", // a credential used where it does not grant access
  "not_found",
  "conflict", // a request that contradicts the current state (e.g. resuming to an older policy version)
  "context_length", // prompt + max tokens exceed the model's context window
  "engine_unavailable", // could not reach any engine (connect errors, 5xx after retries)
  "engine_timeout", // the engine did not answer within the per-call timeout
  "engine_error", // the engine answered with something we cannot use
  "overloaded",
  "client_closed", // the client hung up before the call finished (recorded; nobody is left to answer)
  "internal",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

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

export class PolarError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = "PolarError";
  }

  get status(): number {
    return HTTP_STATUS[this.code];
  }
}

/** Any thrown value as a PolarError (unknown errors become `internal`). */
export function asPolarError(err: unknown): PolarError {
  if (err instanceof PolarError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new PolarError("internal", message);
}
