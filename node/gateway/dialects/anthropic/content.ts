// Why: the non-streaming Message and the SSE stream must describe the same assistant turn, so
// both are built from one list of content blocks, ids and stop reason derived here.
import type { FinishReason, PivotResponse, PivotToolCall } from "../../pivot.ts";
import { shownContent } from "../shared.ts";

export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  signature: string;
}
export interface TextContent {
  type: "text";
  text: string;
  citations: null;
}
export interface ToolUseContent {
  type: "tool_use";
  id: string;
  name: string;
  input: Record<string, unknown>;
}
export type ContentBlock = ThinkingContent | TextContent | ToolUseContent;

export const STOP_REASONS = ["end_turn", "max_tokens", "tool_use", "stop_sequence"] as const;
export type StopReason = (typeof STOP_REASONS)[number];

/** Anthropic ids are `[A-Za-z0-9_-]+`; anything else in an engine id becomes `_`. */
function idSafe(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, "_");
}

function prefixed(prefix: string, id: string): string {
  return id.startsWith(prefix) ? idSafe(id) : `${prefix}${idSafe(id)}`;
}

export function messageId(response: PivotResponse): string {
  return prefixed("msg_", response.id);
}

/** The client echoes this id back in `tool_result.tool_use_id`; the pivot keeps it as given. */
export function toolUseId(call: PivotToolCall): string {
  return prefixed("toolu_", call.id);
}

/**
 * Polar signs nothing: the signature only has to be a non-empty string the client can send back
 * (it is ignored on the way in).
 */
export function thinkingSignature(response: PivotResponse): string {
  return Buffer.from(`polar:${response.id}`).toString("base64");
}

/**
 * The tool input object. Arguments that are not a JSON object (the model wrote broken JSON)
 * become `{}`: the harness then reports a missing-parameter error to the model, which is the
 * honest outcome, and the raw text stays in the recorded pivot response for training.
 */
export function toolInput(argumentsText: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(argumentsText);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // falls through to the empty input
  }
  return {};
}

/** Thinking (when the engine reported reasoning, even whitespace), text, then one tool_use per call. */
export function contentBlocks(response: PivotResponse): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  if (response.reasoning) {
    blocks.push({ type: "thinking", thinking: response.reasoning, signature: thinkingSignature(response) });
  }
  // Whitespace-only text beside tool calls is no text block, as in the OpenAI dialects: the
  // client then echoes no text and the chat template re-renders exactly the sampled tokens.
  const text = shownContent(response);
  if (text !== "") blocks.push({ type: "text", text, citations: null });
  for (const call of response.tool_calls) {
    blocks.push({ type: "tool_use", id: toolUseId(call), name: call.name, input: toolInput(call.arguments) });
  }
  return blocks;
}

const STOP_REASON_BY_FINISH: Record<FinishReason, StopReason> = {
  stop: "end_turn",
  length: "max_tokens",
  tool_calls: "tool_use",
};

/** Tool calls always mean `tool_use`: harnesses run tools only when the stop reason says so. */
export function stopReason(response: PivotResponse): StopReason {
  if (response.tool_calls.length > 0 && response.finish_reason === "stop") return "tool_use";
  if (response.finish_reason === "stop" && response.stop_sequence !== undefined) return "stop_sequence";
  return STOP_REASON_BY_FINISH[response.finish_reason];
}

export function stopSequence(response: PivotResponse): string | null {
  return stopReason(response) === "stop_sequence" ? (response.stop_sequence ?? null) : null;
}

export function usage(response: PivotResponse) {
  return {
    input_tokens: response.usage.prompt_tokens,
    output_tokens: response.usage.completion_tokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}
