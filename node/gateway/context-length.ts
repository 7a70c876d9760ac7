// Why: engines word a context overflow in many ways, and both the backends (to classify an engine
// error) and the dialects (to re-word it the way their clients recognise) read those words; the
// wordings are known once here, beside neither.
import type { ContextLengthDetails } from "../../protocol/errors.ts";

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
  { key: "max_context_tokens", re: /maximum context length (?:is|of) (\d+)/i },
  { key: "max_context_tokens", re: /maximum context length \((\d+)\)/i },
  { key: "max_context_tokens", re: /maximum model length of (\d+)/i },
  { key: "max_context_tokens", re: /model's context length \((\d+) tokens?\)/i },
  { key: "prompt_tokens", re: /\((\d+) in the messages/i },
  { key: "prompt_tokens", re: /requested (\d+) tokens in the messages/i },
  { key: "prompt_tokens", re: /messages resulted in (\d+) tokens/i },
  { key: "prompt_tokens", re: /input length \((\d+)\)/i },
  { key: "prompt_tokens", re: /request has (\d+) input tokens/i },
  { key: "prompt_tokens", re: /prompt contains at least (\d+) input tokens/i },
  { key: "prompt_tokens", re: /decoder prompt \(length (\d+)\)/i },
  { key: "prompt_tokens", re: /input \((\d+) tokens?\)/i },
  { key: "prompt_tokens", re: /(\d+) tokens from the input/i },
  { key: "max_tokens", re: /(\d+) in the completion/i },
  { key: "max_tokens", re: /is too large: (\d+)/i },
  { key: "max_tokens", re: /requested (\d+) output tokens/i },
  { key: "max_tokens", re: /(\d+) tokens for the completion/i },
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
