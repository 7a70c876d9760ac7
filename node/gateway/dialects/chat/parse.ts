// Why: turns a validated Chat Completions body into the pivot request every backend consumes;
// kept apart from rendering because the two change for different reasons (client quirks vs SDK
// stream expectations).
import { z } from "zod";
import type { PivotMessage, PivotRequest, PivotTool, PivotToolChoice } from "../../pivot.ts";
import { parseOrBadRequest } from "../bad-request.ts";
import { joinTextParts } from "../shared.ts";
import { ChatCompletionRequest, type ChatContent, type ChatMessage, type ChatTool } from "./schema.ts";
import { thinkingFromEffort } from "./thinking.ts";

/** The schema given to a tool that declared no parameters (Qwen's `get_goal`). */
export function emptyParameters(): Record<string, unknown> {
  return { type: "object", properties: {} };
}

/** What the Chat dialect needs again at render time (kept in `PivotRequest.renderHints`). */
export const ChatRenderHints = z.object({ include_usage: z.boolean().default(false) });
export type ChatRenderHints = z.infer<typeof ChatRenderHints>;

const TEXT_PART_TYPES: ReadonlySet<string> = new Set(["text", "input_text"]);

/** Text of string-or-parts content: text parts joined by newlines, other parts dropped. */
export function contentText(content: ChatContent | null | undefined): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return joinTextParts(content, (part) => TEXT_PART_TYPES.has(part.type));
}

function toPivotMessage(message: ChatMessage): PivotMessage {
  switch (message.role) {
    case "system":
    case "developer":
      return { role: "system", content: contentText(message.content) };
    case "user":
      return { role: "user", content: contentText(message.content) };
    case "assistant": {
      const pivot: PivotMessage = { role: "assistant", content: contentText(message.content) };
      const reasoning = message.reasoning_content ?? message.reasoning;
      if (reasoning) pivot.reasoning = reasoning;
      if (message.tool_calls && message.tool_calls.length > 0) {
        pivot.tool_calls = message.tool_calls.map((call) => ({
          id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
        }));
      }
      return pivot;
    }
    case "tool": {
      const pivot: PivotMessage = { role: "tool", content: contentText(message.content), tool_call_id: message.tool_call_id };
      if (message.name) pivot.name = message.name;
      return pivot;
    }
  }
}

function toPivotTools(tools: ChatTool[] | null | undefined): PivotTool[] {
  const pivot: PivotTool[] = [];
  for (const tool of tools ?? []) {
    if (tool.type !== "function" || !tool.function) continue;
    const { name, description, parameters } = tool.function;
    const converted: PivotTool = { name, parameters: parameters ?? emptyParameters() };
    if (description) converted.description = description;
    pivot.push(converted);
  }
  return pivot;
}

function toPivotToolChoice(choice: ChatCompletionRequest["tool_choice"]): PivotToolChoice | undefined {
  if (choice === null || choice === undefined) return undefined;
  if (typeof choice === "string") return choice;
  return { name: choice.function.name };
}

function stopList(stop: string | string[] | null | undefined): string[] | undefined {
  if (stop === null || stop === undefined) return undefined;
  return typeof stop === "string" ? [stop] : stop;
}

/** Drops undefined values so the recorded request holds only what the client set. */
function defined<T extends Record<string, unknown>>(record: T): Partial<T> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as Partial<T>;
}

export function parseChatRequest(body: unknown): PivotRequest {
  const request = parseOrBadRequest(ChatCompletionRequest, body);
  const stream = request.stream ?? false;
  const hints: ChatRenderHints = { include_usage: stream && (request.stream_options?.include_usage ?? false) };
  const pivot: PivotRequest = {
    model: request.model,
    messages: request.messages.map(toPivotMessage),
    tools: toPivotTools(request.tools),
    sampling: defined({
      max_tokens: request.max_completion_tokens ?? request.max_tokens ?? undefined,
      temperature: request.temperature ?? undefined,
      top_p: request.top_p ?? undefined,
      top_k: request.top_k ?? undefined,
      stop: stopList(request.stop),
      seed: request.seed ?? undefined,
    }),
    stream,
    render_hints: { ...hints },
  };
  const toolChoice = toPivotToolChoice(request.tool_choice);
  if (toolChoice !== undefined) pivot.tool_choice = toolChoice;
  const thinking = request.chat_template_kwargs?.enable_thinking ?? thinkingFromEffort(request.reasoning_effort);
  if (thinking !== undefined) pivot.thinking = thinking;
  return pivot;
}
