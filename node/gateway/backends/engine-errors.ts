// Why: engines (vLLM, SGLang, hosted OpenAI-compatible APIs) report failures in slightly different
// shapes and words; this module turns each into one PolarError code so dialects can answer
// clients consistently (e.g. a context overflow becomes each dialect's "prompt too long").
import { z } from "zod";
import { PolarError } from "../../errors.ts";

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

/**
 * Numbers a context_length PolarError carries in its details (those the engine named). Dialects
 * read them back with this schema to word the overflow the way their clients recognise it.
 */
export const ContextLengthDetails = z.object({
  /** The model's context window. */
  maxContextTokens: z.number().int().nonnegative().optional(),
  /** Tokens of the prompt. */
  promptTokens: z.number().int().nonnegative().optional(),
  /** Completion tokens requested (max_tokens). */
  maxTokens: z.number().int().nonnegative().optional(),
});
export type ContextLengthDetails = z.infer<typeof ContextLengthDetails>;

/**
 * Wordings of a context overflow. vLLM (vllm/entrypoints/serve, renderers): "This model's maximum
 * context length is N tokens. However, you requested X tokens (P in the messages, M in the
 * completion)…", older vLLM "… However, you requested P tokens in the messages, Please reduce…",
 * "'max_tokens' or 'max_completion_tokens' is too large: M. This model's maximum
 * context length is N tokens and your request has P input tokens (M > N - P)", "The decoder prompt
 * (length P) is longer than the maximum model length of N", "Input length (P) exceeds model's
 * maximum context length (N)" (vllm/entrypoints/serve/utils/api_utils.py get_max_tokens). SGLang: "The input (P tokens) is
 * longer than the model's context length (N tokens)", "Requested token count exceeds the model's
 * maximum context length of N tokens. You requested a total of T tokens: P tokens from the input
 * messages and M tokens for the completion". OpenAI: "… However, your messages resulted in P tokens".
 */
const CONTEXT_LENGTH_MARKERS = [
  /maximum context length/i,
  /longer than the maximum model length/i,
  /longer than the model's context length/i,
  /context length exceeded/i,
  /context_length_exceeded/i,
];

export function isContextLengthMessage(message: string): boolean {
  return CONTEXT_LENGTH_MARKERS.some((re) => re.test(message));
}

const NUMBER_PATTERNS: { key: keyof ContextLengthDetails; re: RegExp }[] = [
  { key: "maxContextTokens", re: /maximum context length (?:is|of) (\d+)/i },
  { key: "maxContextTokens", re: /maximum context length \((\d+)\)/i },
  { key: "maxContextTokens", re: /maximum model length of (\d+)/i },
  { key: "maxContextTokens", re: /model's context length \((\d+) tokens?\)/i },
  { key: "promptTokens", re: /\((\d+) in the messages/i },
  { key: "promptTokens", re: /requested (\d+) tokens in the messages/i },
  { key: "promptTokens", re: /messages resulted in (\d+) tokens/i },
  { key: "promptTokens", re: /input length \((\d+)\)/i },
  { key: "promptTokens", re: /request has (\d+) input tokens/i },
  { key: "promptTokens", re: /prompt contains at least (\d+) input tokens/i },
  { key: "promptTokens", re: /decoder prompt \(length (\d+)\)/i },
  { key: "promptTokens", re: /input \((\d+) tokens?\)/i },
  { key: "promptTokens", re: /(\d+) tokens from the input/i },
  { key: "maxTokens", re: /(\d+) in the completion/i },
  { key: "maxTokens", re: /is too large: (\d+)/i },
  { key: "maxTokens", re: /requested (\d+) output tokens/i },
  { key: "maxTokens", re: /(\d+) tokens for the completion/i },
];

/** Numbers named in a context-overflow message (those present). */
export function parseContextLength(message: string): ContextLengthDetails {
  const details: ContextLengthDetails = {};
  for (const { key, re } of NUMBER_PATTERNS) {
    if (details[key] !== undefined) continue;
    const match = re.exec(message);
    if (match?.[1]) details[key] = Number(match[1]);
  }
  return details;
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
