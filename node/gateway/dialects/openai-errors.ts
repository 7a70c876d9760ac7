// Why: Chat Completions and Responses share OpenAI's error shape `{error:{message,type,param,code}}`
// and its status codes; harnesses (codex, pi, qwen) recognise a context overflow by
// `code:"context_length_exceeded"` and by OpenAI's message wording, so both dialects map PolarError
// here, in one place, and turn zod failures into a bad_request that names the offending field.
import { z } from "zod";
import { PolarError, type ErrorCode } from "../../errors.ts";

export interface OpenAiErrorObject {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

const TYPE_AND_CODE: Record<ErrorCode, { type: string; code: string | null }> = {
  bad_request: { type: "invalid_request_error", code: null },
  unauthorized: { type: "invalid_request_error", code: "invalid_api_key" },
  forbidden: { type: "invalid_request_error", code: "permission_denied" },
  not_found: { type: "invalid_request_error", code: "not_found" },
  context_length: { type: "invalid_request_error", code: "context_length_exceeded" },
  engine_unavailable: { type: "server_error", code: "engine_unavailable" },
  engine_timeout: { type: "server_error", code: "timeout" },
  engine_error: { type: "server_error", code: "engine_error" },
  overloaded: { type: "server_error", code: "overloaded" },
  internal: { type: "server_error", code: null },
};

/** Numbers a backend attaches to a context_length error (see backends/engine-errors.ts). */
const ContextLengthDetails = z.object({
  maxContextTokens: z.number().int().optional(),
  promptTokens: z.number().int().optional(),
  maxTokens: z.number().int().optional(),
});

/**
 * OpenAI's own wording, which clients match with regexes ("maximum context length is N tokens",
 * "reduce the length of the messages"): vLLM's message already has it; otherwise it is rebuilt
 * from the numbers the backend found, or wrapped around the engine's message.
 */
function contextLengthMessage(error: PolarError): string {
  if (/maximum context length is \d+ tokens/i.test(error.message)) return error.message;
  const details = ContextLengthDetails.safeParse(error.details ?? {});
  const { maxContextTokens, promptTokens, maxTokens } = details.success ? details.data : {};
  if (maxContextTokens === undefined) {
    return `This model's maximum context length was exceeded (${error.message}). Please reduce the length of the messages.`;
  }
  const requested =
    promptTokens === undefined
      ? ""
      : maxTokens === undefined
        ? ` However, your messages resulted in ${promptTokens} tokens.`
        : ` However, you requested ${promptTokens + maxTokens} tokens (${promptTokens} in the messages, ${maxTokens} in the completion).`;
  return `This model's maximum context length is ${maxContextTokens} tokens.${requested} Please reduce the length of the messages.`;
}

/**
 * The OpenAI error object for a PolarError. `promptParam` names the request field holding the
 * prompt (`messages` for Chat, `input` for Responses), reported as `param` on context overflows.
 */
export function openAiErrorObject(error: PolarError, promptParam: string): OpenAiErrorObject {
  const { type, code } = TYPE_AND_CODE[error.code];
  if (error.code === "context_length") {
    return { message: contextLengthMessage(error), type, param: promptParam, code };
  }
  return { message: error.message, type, param: null, code };
}

export function renderOpenAiError(error: PolarError, promptParam: string): { status: number; body: unknown } {
  return { status: error.status, body: { error: openAiErrorObject(error, promptParam) } };
}

interface Located {
  path: PropertyKey[];
  message: string;
}

/** The most specific issue: inside a union, the branch that got furthest into the value. */
function locate(issue: z.core.$ZodIssue): Located {
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return { path: issue.path, message: issue.message };
  let best: Located | undefined;
  for (const branch of issue.errors) {
    for (const inner of branch) {
      const found = locate(inner);
      if (!best || found.path.length > best.path.length) best = found;
    }
  }
  if (!best) return { path: issue.path, message: issue.message };
  return { path: [...issue.path, ...best.path], message: best.message };
}

/** PolarError("bad_request") naming the bad field by its JSON path, e.g. `messages.1.role: …`. */
export function badRequestFromZod(error: z.ZodError): PolarError {
  const first = error.issues[0];
  if (!first) return new PolarError("bad_request", "invalid request body");
  const { path, message } = locate(first);
  const field = path.length > 0 ? path.map(String).join(".") : "body";
  return new PolarError("bad_request", `invalid request: ${field}: ${message}`, { issues: error.issues });
}

/** Validates a body with a zod schema, throwing a bad_request that names the field. */
export function parseOrBadRequest<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw badRequestFromZod(parsed.error);
  return parsed.data;
}
