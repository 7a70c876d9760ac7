// Why: the gateway needs a model's tokenizer and chat template for two jobs — exact
// count_tokens and trajectory rebuilding — and both are built from one model folder here.
import { getChatTemplate, pivotToTemplateMessages, pivotToTemplateTools } from "../tokenizer/index.ts";
import type { TrajectoryTokenizer } from "../trajectory/index.ts";
import type { PivotRequest } from "./pivot.ts";

/** A model folder's tokenizer as trajectory rebuilding sees it (default: the bundled Qwen3). */
export function trajectoryTokenizer(folder?: string): TrajectoryTokenizer {
  const template = getChatTemplate(folder);
  return {
    encode: (text) => template.tokenizer.encode(text),
    decode: (ids) => template.tokenizer.decode(ids),
    renderChat: ({ messages, tools, thinking, addGenerationPrompt }) =>
      template.render(pivotToTemplateMessages(messages), { tools: pivotToTemplateTools(tools), enableThinking: thinking, addGenerationPrompt }),
  };
}

/** Exact prompt token count of a request under a model folder's chat template. */
export function promptTokenCounter(folder: string): (request: PivotRequest) => number {
  const template = getChatTemplate(folder);
  return (request) =>
    template.renderIds(pivotToTemplateMessages(request.messages), { tools: pivotToTemplateTools(request.tools), enableThinking: request.thinking }).length;
}
