// Why: request failures the mock engine reports (bad input, unknown model, context overflow,
// injected faults) are decided once and rendered in each dialect's own error shape.

export const ENGINE_ERROR_KINDS = ["bad_request", "unauthorized", "not_found", "conflict", "context_length", "internal"] as const;
export type EngineErrorKind = (typeof ENGINE_ERROR_KINDS)[number];

const STATUS: Record<EngineErrorKind, number> = { bad_request: 400, unauthorized: 401, not_found: 404, conflict: 409, context_length: 400, internal: 500 };
/** vLLM's error `type` strings (HTTPStatus phrase + "Error"). */
const VLLM_TYPE: Record<EngineErrorKind, string> = {
  bad_request: "BadRequestError",
  unauthorized: "UnauthorizedError",
  not_found: "NotFoundError",
  conflict: "ConflictError",
  context_length: "BadRequestError",
  internal: "InternalServerError",
};

export class EngineError extends Error {
  constructor(
    readonly kind: EngineErrorKind,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = "EngineError";
  }

  get status(): number {
    return STATUS[this.kind];
  }
}

/** vLLM's ErrorResponse: `{error: {message, type, param, code}}`. */
export function vllmErrorBody(err: EngineError): { error: { message: string; type: string; param: string | null; code: number } } {
  return { error: { message: err.message, type: VLLM_TYPE[err.kind], param: err.param, code: err.status } };
}

/** SGLang's OpenAI-endpoint ErrorResponse: flat `{object:"error", message, type, param, code}`. */
export function sglangErrorBody(err: EngineError): { object: "error"; message: string; type: string; param: string | null; code: number } {
  const type = err.kind === "not_found" ? "NotFoundError" : err.kind === "internal" ? "InternalServerError" : "BadRequest";
  return { object: "error", message: err.message, type, param: err.param, code: err.status };
}

export function asEngineError(err: unknown): EngineError {
  if (err instanceof EngineError) return err;
  return new EngineError("internal", err instanceof Error ? err.message : String(err));
}
