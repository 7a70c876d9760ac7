// Why: the part of a chat completion vLLM and SGLang share — validate, render the chat template,
// admit, generate, parse reasoning and tool calls — and the OpenAI chat logprobs both return; each
// API's module only shapes its own answer around it.
import { parseQwen3Output, type Qwen3Output } from "../tokenizer/qwen3-output.ts";
import { ChatCompletionRequest, renderOptions, requestedMaxTokens, templateMessages, toolParsingActive } from "./chat-request.ts";
import type { EngineContext } from "./context.ts";
import { EngineError } from "./engine-error.ts";
import type { Generation } from "./model.ts";
import { checkModel, parseBody } from "./request.ts";
import { stopList } from "./stop-strings.ts";

export interface PreparedChat {
  request: ChatCompletionRequest;
  promptIds: number[];
  generation: Generation;
  parsed: Qwen3Output;
  finishReason: "stop" | "length" | "tool_calls";
}

/** Validate, render, admit, generate, parse: everything before the answer is shaped. */
export async function prepareChat(ctx: EngineContext, body: unknown, signal: AbortSignal, toolCallId: () => string): Promise<PreparedChat> {
  const request = parseBody(ChatCompletionRequest, body);
  checkModel(ctx, request.model);
  if ((request.n ?? 1) !== 1) throw new EngineError("bad_request", "Only n=1 is supported by the mock engine.", "n");
  const stop = stopList(request.stop);
  await ctx.gate.admit(signal);
  const { ids: promptIds } = ctx.model.renderChat(templateMessages(request), renderOptions(request));
  const generation = ctx.model.generate({
    promptIds,
    maxTokens: requestedMaxTokens(request),
    requestSeed: request.seed ?? undefined,
    topLogprobs: request.logprobs ? (request.top_logprobs ?? 0) : 0,
    stop,
    keepStopString: (ctx.options.dialect === "sglang" ? request.no_stop_trim : request.include_stop_str_in_output) === true,
  });
  const parsed = parseQwen3Output(generation.text, { parseToolCalls: toolParsingActive(request), makeToolCallId: toolCallId });
  const finishReason = parsed.toolCalls.length > 0 && generation.finishReason === "stop" ? "tool_calls" : generation.finishReason;
  return { request, promptIds, generation, parsed, finishReason };
}

/** OpenAI chat logprobs content for output positions [from, to). */
export function chatLogprobs(ctx: EngineContext, g: Generation, from: number, to: number) {
  const entry = (id: number, logprob: number) => ({ token: ctx.model.tokenText(id), logprob, bytes: ctx.model.tokenTextBytes(id) });
  const content = [];
  for (let i = from; i < to; i++) {
    content.push({ ...entry(g.outputIds[i]!, g.logprobs[i]!), top_logprobs: (g.top[i] ?? []).map((t) => entry(t.id, t.logprob)) });
  }
  return { content };
}
