// Why: engines (vLLM, SGLang, hosted OpenAI-compatible APIs) report failures in slightly different
// shapes and words; this module turns each into one PolarError code so dialects can answer
// clients consistently (e.g. a context overflow becomes each dialect's "prompt too long").
import { z } from "zod";
import { PolarError } from "../../errors.ts";
import { isContextLengthMessage, parseContextLength } from "../context-length.ts";

/** Error bodies seen in the wild: OpenAI `{error:{message}}`, vLLM/SGLang `{object:"error",message}`, FastAPI `{detail}`. */
const EngineErrorBody = z.object({
  error: z.union([z.string(), z.object({ message: z.string() })]).optional(),
  message: z.string().optional(),
  detail: z.unknown().optional(),
});

/** The engine's own message from an error body (falls back to the raw text). */
export function engineErrorMessage(bodyText: string): string {
  const raw = bodyText.trim().slice(0, 2000);
  let json: unknown;
  try {
    json = JSON.parse(bodyText);
  } catch {
    return raw;
  }
  const parsed = EngineErrorBody.safeParse(json);
  if (!parsed.success) return raw;
  const { error, message, detail } = parsed.data;
  if (typeof error === "string") return error;
  if (error) return error.message;
  if (message !== undefined) return message;
  if (typeof detail === "string") return detail;
  return detail === undefined ? raw : JSON.stringify(detail);
}

/** Whether a failed HTTP status is worth another attempt (5xx: the engine may recover). */
export function isRetryableStatus(status: number): boolean {
  return status >= 500;
}

/** A non-2xx engine answer as a PolarError (after retries, for 5xx). */
export function engineHttpError(status: number, bodyText: string, engineUrl: string, attempts = 1): PolarError {
  const message = engineErrorMessage(bodyText) || `HTTP ${status}`;
  const details = { status, engineUrl, attempts };
  if (status >= 500) return new PolarError("engine_unavailable", `engine ${status}: ${message}`, details);
  if ((status === 400 || status === 413 || status === 422) && isContextLengthMessage(message)) {
    return new PolarError("context_length", message, { ...details, ...parseContextLength(message) });
  }
  if (status === 429) return new PolarError("overloaded", message, details);
  if (status === 400 || status === 422) return new PolarError("bad_request", message, details);
  return new PolarError("engine_error", `engine ${status}: ${message}`, details);
}
