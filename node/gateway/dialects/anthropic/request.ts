// Why: turns an Anthropic Messages body into the pivot chat request. The mapping decisions
// (where system text goes, how tool results and thinking are carried) live here and only here.
import type { PivotMessage, PivotRequest, PivotSampling, PivotTool, PivotToolCall, PivotToolChoice } from "../../pivot.ts";
import { parseOrBadRequest } from "../bad-request.ts";
import { joinTextParts, TEXT_PART_SEPARATOR } from "../shared.ts";
import { CountTokensRequest, type InputMessage, type InputTool, type MessageBlock, MessagesRequest, type SystemPrompt, type ToolChoice } from "./schema.ts";

/** Prefix given to a tool result sent with `is_error: true` (the pivot has no error flag). */
export const TOOL_ERROR_PREFIX = "Error: ";

/** `POST /v1/messages` body → pivot request; throws PolarError("bad_request") naming the field. */
export function parseMessagesRequest(body: unknown): PivotRequest {
  return toPivot(parseOrBadRequest(MessagesRequest, body));
}

/** `POST /v1/messages/count_tokens` body (no `max_tokens` needed) → pivot request, not streamed. */
export function parseCountTokensRequest(body: unknown): PivotRequest {
  return { ...toPivot(parseOrBadRequest(CountTokensRequest, body)), stream: false };
}

function toPivot(request: CountTokensRequest): PivotRequest {
  const pivot: PivotRequest = {
    model: request.model,
    messages: [...systemMessages(request.system), ...conversation(request.messages)],
    tools: (request.tools ?? []).flatMap(customTool),
    sampling: sampling(request),
    stream: request.stream === true,
  };
  if (request.tool_choice) pivot.tool_choice = toolChoice(request.tool_choice);
  if (request.thinking) pivot.thinking = request.thinking.type !== "disabled";
  return pivot;
}

function systemMessages(system: SystemPrompt | null | undefined): PivotMessage[] {
  if (system == null) return [];
  const content = typeof system === "string" ? system : joinText(system);
  return content === "" ? [] : [{ role: "system", content }];
}

function conversation(messages: InputMessage[]): PivotMessage[] {
  const toolNames = new Map<string, string>();
  const out: PivotMessage[] = [];
  for (const message of messages) {
    if (typeof message.content === "string") {
      out.push({ role: message.role, content: message.content });
    } else if (message.role === "assistant") {
      out.push(assistantMessage(message.content, toolNames));
    } else if (message.role === "user") {
      out.push(...userMessages(message.content, toolNames));
    } else {
      out.push({ role: "system", content: joinText(message.content) });
    }
  }
  return out;
}

function assistantMessage(blocks: MessageBlock[], toolNames: Map<string, string>): PivotMessage {
  const reasoning: string[] = [];
  const toolCalls: PivotToolCall[] = [];
  for (const block of blocks) {
    if (block.type === "thinking") reasoning.push(block.thinking);
    if (block.type === "tool_use") {
      toolNames.set(block.id, block.name);
      toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input) });
    }
  }
  const message: PivotMessage = { role: "assistant", content: joinText(blocks) };
  if (reasoning.length > 0) message.reasoning = reasoning.join(TEXT_PART_SEPARATOR);
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return message;
}

/** Tool results become pivot tool messages, in order, before the user text of the same message. */
function userMessages(blocks: MessageBlock[], toolNames: Map<string, string>): PivotMessage[] {
  const out: PivotMessage[] = [];
  for (const block of blocks) {
    if (block.type !== "tool_result") continue;
    const text = typeof block.content === "string" ? block.content : joinText(block.content ?? []);
    const tool: PivotMessage = {
      role: "tool",
      content: block.is_error === true ? `${TOOL_ERROR_PREFIX}${text}` : text,
      tool_call_id: block.tool_use_id,
    };
    const name = toolNames.get(block.tool_use_id);
    if (name !== undefined) tool.name = name;
    out.push(tool);
  }
  const hasText = blocks.some((block) => block.type === "text");
  if (out.length === 0 || hasText) out.push({ role: "user", content: joinText(blocks) });
  return out;
}

/** Text blocks joined as the OpenAI dialects join text parts; other blocks are dropped. */
function joinText(blocks: readonly { type: string; text?: string }[]): string {
  return joinTextParts(blocks, (block) => block.type === "text");
}

/** Custom tools (with `input_schema`, `defer_loading` ones included) are kept; server tools are dropped. */
function customTool(tool: InputTool): PivotTool[] {
  if (tool.input_schema == null) return [];
  const pivot: PivotTool = { name: tool.name, parameters: tool.input_schema };
  if (tool.description != null) pivot.description = tool.description;
  return [pivot];
}

function toolChoice(choice: ToolChoice): PivotToolChoice {
  switch (choice.type) {
    case "auto":
      return "auto";
    case "any":
      return "required";
    case "none":
      return "none";
    case "tool":
      return { name: choice.name };
  }
}

function sampling(request: CountTokensRequest): PivotSampling {
  const out: PivotSampling = {};
  if (request.max_tokens != null) out.max_tokens = request.max_tokens;
  if (request.temperature != null) out.temperature = request.temperature;
  if (request.top_p != null) out.top_p = request.top_p;
  if (request.top_k != null) out.top_k = request.top_k;
  if (request.stop_sequences != null && request.stop_sequences.length > 0) out.stop = request.stop_sequences;
  return out;
}
