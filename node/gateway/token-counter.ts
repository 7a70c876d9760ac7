// Why: Anthropic's count_tokens must answer even when no tokenizer is configured; this picks the
// most exact source available: the configured tokenizer, then the backend, then an estimate.
import type { Backend } from "./backends/backend.ts";
import type { PivotRequest } from "./pivot.ts";

export interface TokenCounter {
  count(request: PivotRequest): Promise<number>;
}

/** Counts with `exact` when given (a chat-template render + tokenizer), else asks the backend. */
export function createTokenCounter(backend: Backend, exact?: (request: PivotRequest) => number): TokenCounter {
  return {
    async count(request) {
      if (exact) return exact(request);
      const fromBackend = await backend.countTokens?.(request);
      return fromBackend ?? estimateTokens(request);
    },
  };
}

/** ~4 characters per token over everything the template would render: a last resort. */
function estimateTokens(request: PivotRequest): number {
  let chars = 0;
  for (const m of request.messages) chars += m.content.length + (m.reasoning?.length ?? 0) + JSON.stringify(m.tool_calls ?? []).length + 8;
  for (const t of request.tools) chars += JSON.stringify(t).length;
  return Math.ceil(chars / 4);
}
