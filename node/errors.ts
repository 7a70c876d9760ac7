// Why: one small error type over the closed set of codes (protocol/errors.ts), so every layer
// (dialects, backends, store, CLI) speaks the same failure language and each wire format maps it
// in one place.
import type { ErrorCode } from "../protocol/errors.ts";

export { ERROR_CODES, type ErrorCode } from "../protocol/errors.ts";

const HTTP_STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  too_large: 413,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  context_length: 400,
  engine_unavailable: 502,
  engine_timeout: 504,
  engine_error: 502,
  overloaded: 529,
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
