// Why: Chat Completions and Responses share OpenAI's error shape `{error:{message,type,param,code}}`
// and its status codes; harnesses (codex, pi, qwen) recognise a context overflow by
// `code:"context_length_exceeded"` and by OpenAI's message wording, so both dialects map PolarError
// here, in one place, and turn zod failures into a bad_request that names the offending field.
import { ContextLengthDetails, type ErrorCode, type OpenAiErrorBody, type OpenAiErrorObject } from "../../../protocol/errors.ts";
import type { PolarError } from "../../../protocol/errors.ts";

const TYPE_AND_CODE: Record<ErrorCode, { type: string; code: string | null }> = {
  bad_request: { type: "invalid_request_error", code: null },
  too_large: { type: "invalid_request_error", code: "request_too_large" },
  unauthorized: { type: "invalid_request_error", code: "invalid_api_key" },
  forbidden: { type: "invalid_request_error", code: "permission_denied" },
  not_found: { type: "invalid_request_error", code: "not_found" },
  conflict: { type: "invalid_request_error", code: "conflict" },
  context_length: { type: "invalid_request_error", code: "context_length_exceeded" },
  engine_unavailable: { type: "server_error", code: "engine_unavailable" },
  engine_timeout: { type: "server_error", code: "timeout" },
  engine_error: { type: "server_error", code: "engine_error" },
  overloaded: { type: "server_error", code: "overloaded" },
  client_closed: { type: "invalid_request_error", code: "client_closed" },
  internal: { type: "server_error", code: null },
};

/**
 * OpenAI's own wording, which clients match with regexes ("maximum context length is N tokens",
 * "reduce the length of the messages"): vLLM's message already has it; otherwise it is rebuilt
 * from the numbers the backend found, or wrapped around the engine's message.
 */
function contextLengthMessage(error: PolarError): string {
  if (/maximum context length is \d+ tokens/i.test(error.message)) return error.message;
  const details = ContextLengthDetails.safeParse(error.details ?? {});
  const { max_context_tokens: maxContextTokens, prompt_tokens: promptTokens, max_tokens: maxTokens } = details.success ? details.data : {};
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

export function renderOpenAiError(error: PolarError, promptParam: string): { status: number; body: OpenAiErrorBody } {
  return { status: error.status, body: { error: openAiErrorObject(error, promptParam) } };
}
