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
