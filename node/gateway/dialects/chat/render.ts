// Why: renders a finished pivot response as the `chat.completion` body or as the
// `chat.completion.chunk` SSE sequence the official `openai` SDK (and harnesses built on it)
// accumulate: role, reasoning_content, content, tool_calls (id/name first, then arguments),
// finish_reason, optional usage chunk, `[DONE]`.
import type { PivotRequest, PivotResponse, PivotToolCall } from "../../pivot.ts";
import { sseFrame, type SseFrame } from "../dialect.ts";
import { renderHintsOf, shownContent, unixSeconds } from "../shared.ts";
import { ChatRenderHints } from "./parse.ts";

const ID_PREFIX = "chatcmpl-";

export function completionId(response: PivotResponse): string {
  return response.id.startsWith(ID_PREFIX) ? response.id : `${ID_PREFIX}${response.id}`;
}

function usageOf(response: PivotResponse) {
  const { prompt_tokens: promptTokens, completion_tokens: completionTokens } = response.usage;
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

function wireToolCall(call: PivotToolCall) {
  return { id: call.id, type: "function" as const, function: { name: call.name, arguments: call.arguments } };
}

export function renderChatResponse(response: PivotResponse) {
  const hasToolCalls = response.tool_calls.length > 0;
  const message: Record<string, unknown> = {
    role: "assistant",
    content: hasToolCalls && shownContent(response) === "" ? null : response.content,
    refusal: null,
  };
  if (hasToolCalls) message.tool_calls = response.tool_calls.map(wireToolCall);
  if (response.reasoning) message.reasoning_content = response.reasoning;
  return {
    id: completionId(response),
    object: "chat.completion",
    created: unixSeconds(),
    model: response.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: response.finish_reason }],
    usage: usageOf(response),
  };
}

export function renderChatStream(response: PivotResponse, request: PivotRequest): SseFrame[] {
  const { include_usage: includeUsage } = renderHintsOf(ChatRenderHints, request);
  const base = { id: completionId(response), object: "chat.completion.chunk", created: unixSeconds(), model: response.model };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    sseFrame({
      ...base,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage ? { usage: null } : {}),
    });

  const frames: SseFrame[] = [chunk({ role: "assistant", content: "" })];
  if (response.reasoning) frames.push(chunk({ reasoning_content: response.reasoning }));
  if (shownContent(response)) frames.push(chunk({ content: response.content }));
  response.tool_calls.forEach((call, index) => {
    frames.push(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }));
    if (call.arguments) frames.push(chunk({ tool_calls: [{ index, function: { arguments: call.arguments } }] }));
  });
  frames.push(chunk({}, response.finish_reason));
  if (includeUsage) frames.push(sseFrame({ ...base, choices: [], usage: usageOf(response) }));
  frames.push(sseFrame("[DONE]"));
  return frames;
}
