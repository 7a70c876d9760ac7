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
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "PolarError";
  }

  get status(): number {
    return HTTP_STATUS[this.code];
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
  const at = err instanceof Error ? err.stack?.split("\n").find((l) => l.trim().startsWith("at "))?.trim() : undefined;
  return { name, codes, ...(at && { at }) };
}
