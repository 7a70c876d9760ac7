// Why: `POST /v1/messages/count_tokens` shares the request mapping with `/v1/messages`; the
// gateway counts the pivot prompt and this module gives the answer its Anthropic shape.
export { parseCountTokensRequest } from "./request.ts";

export function renderCountTokens(inputTokens: number): { input_tokens: number } {
  return { input_tokens: inputTokens };
}
