// Why: engines (vLLM, SGLang, hosted OpenAI-compatible APIs) report failures in slightly different
// shapes and words; this module turns each into one PolarError code so dialects can answer
// clients consistently (e.g. a context overflow becomes each dialect's "prompt too long").
import { z } from "zod";
import { PolarError } from "../../../protocol/errors.ts";
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

/** Engine statuses that are the gateway's own fault (its engine credentials), not the client's. */
const GATEWAY_CREDENTIAL_STATUSES = new Set([401, 403, 407]);

/**
 * An engine's message as a client may see it: one line, at most 300 characters, URLs replaced
 * (an engine's 5xx can carry a traceback or its own address; the full text goes to the log).
 */
export function clientSafeEngineMessage(message: string): string {
  const firstLine = message.split("\n", 1)[0]!.trim();
  const short = firstLine.length > 300 ? `${firstLine.slice(0, 300)}…` : firstLine;
  return short.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, "<url>");
}

/**
 * A non-2xx engine answer as a PolarError (after retries, for 5xx). A 4xx is the request's
 * fault (the engine's template, tokenizer or validation refused it): bad_request, never retried,
 * except a context overflow (context_length), 429 (overloaded) and a refused engine credential.
 */
export function engineHttpError(status: number, bodyText: string, engineUrl: string, attempts = 1): PolarError {
  const engineMessage = engineErrorMessage(bodyText) || `HTTP ${status}`;
  const message = clientSafeEngineMessage(engineMessage);
  const details = { status, engineUrl, attempts, engineMessage: engineMessage.slice(0, 2000) };
  if (status >= 500) return new PolarError("engine_unavailable", `engine ${status}: ${message}`, details);
  if ((status === 400 || status === 413 || status === 422) && isContextLengthMessage(message)) {
    return new PolarError("context_length", message, { ...details, ...parseContextLength(message) });
  }
  if (status === 429) return new PolarError("overloaded", message, details);
  if (GATEWAY_CREDENTIAL_STATUSES.has(status)) return new PolarError("engine_error", `engine ${status}: the engine refused the gateway's credentials`, details);
  if (status >= 400) return new PolarError("bad_request", message, details);
  return new PolarError("engine_error", `engine ${status}: ${message}`, details);
}
