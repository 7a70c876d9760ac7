// Why: a Responses `input` is a flat list of items (messages, function calls, their outputs,
// reasoning) while the pivot is a chat; this module folds the items into chat turns the way the
// model produced them: reasoning → the next assistant turn, function calls → the assistant turn
// they follow, outputs → tool messages.
import { z } from "zod";
import type { PivotMessage, PivotRequest } from "../../pivot.ts";
import { thinkingFromEffort } from "../chat/thinking.ts";
import { parseOrBadRequest } from "../bad-request.ts";
import { joinTextParts } from "../shared.ts";
import { DROPPED, ResponsesRequest, type ResponsesContent, type ResponsesInputItem } from "./schema.ts";
import { flattenTools, modelVisibleName, pivotToolChoice, ToolNamespaces } from "./tools.ts";

/** What the Responses dialect needs again at render time (kept in `PivotRequest.renderHints`). */
export const ResponsesRenderHints = z.object({ tool_namespaces: ToolNamespaces.default({}) });
export type ResponsesRenderHints = z.infer<typeof ResponsesRenderHints>;

/** Text of string-or-parts content: text parts joined by newlines, images and files dropped. */
function contentText(content: ResponsesContent): string {
  if (typeof content === "string") return content;
  return joinTextParts(content, (part) => part.type !== DROPPED.type);
}

const SYSTEM_ROLES = new Set(["system", "developer"]);

class ChatBuilder {
  readonly messages: PivotMessage[] = [];
  private pendingReasoning: string | undefined;
  private readonly toolNames = new Map<string, string>();

  add(item: ResponsesInputItem): void {
    switch (item.type) {
      case DROPPED.type:
        return;
      case "reasoning":
        this.addReasoning(item.content ?? [], item.summary ?? []);
        return;
      case "function_call": {
        const name = modelVisibleName(item.name, item.namespace);
        this.toolNames.set(item.call_id, name);
        const assistant = this.openAssistant();
        assistant.tool_calls = [...(assistant.tool_calls ?? []), { id: item.call_id, name, arguments: item.arguments }];
        return;
      }
      case "function_call_output": {
        const message: PivotMessage = { role: "tool", content: contentText(item.output), tool_call_id: item.call_id };
        const name = this.toolNames.get(item.call_id);
        if (name) message.name = name;
        this.messages.push(message);
        return;
      }
      default: {
        const text = contentText(item.content);
        if (item.role === "assistant") this.messages.push(this.takeReasoning({ role: "assistant", content: text }));
        else this.messages.push({ role: SYSTEM_ROLES.has(item.role) ? "system" : "user", content: text });
      }
    }
  }

  /** Full reasoning text when the client sent it back, else its summary (encrypted content is opaque). */
  private addReasoning(content: ResponsesContent, summary: ResponsesContent): void {
    const text = contentText(content) || contentText(summary);
    if (text) this.pendingReasoning = this.pendingReasoning ? `${this.pendingReasoning}\n${text}` : text;
  }

  private takeReasoning(message: PivotMessage): PivotMessage {
    if (this.pendingReasoning !== undefined) message.reasoning = this.pendingReasoning;
    this.pendingReasoning = undefined;
    return message;
  }

  /** The assistant turn a function call belongs to: the one just before it, or a new one. */
  private openAssistant(): PivotMessage {
    const last = this.messages.at(-1);
    if (last?.role === "assistant" && this.pendingReasoning === undefined) return last;
    const assistant = this.takeReasoning({ role: "assistant", content: "" });
    this.messages.push(assistant);
    return assistant;
  }
}

function inputItems(input: ResponsesRequest["input"]): ResponsesInputItem[] {
  return typeof input === "string" ? [{ role: "user", content: input }] : input;
}

export function parseResponsesRequest(body: unknown): PivotRequest {
  const request = parseOrBadRequest(ResponsesRequest, body);
  const builder = new ChatBuilder();
  if (request.instructions) builder.messages.push({ role: "system", content: request.instructions });
  for (const item of inputItems(request.input)) builder.add(item);

  const { tools, namespaces } = flattenTools(request.tools ?? []);
  const hints: ResponsesRenderHints = { tool_namespaces: namespaces };
  const sampling: PivotRequest["sampling"] = {};
  if (request.max_output_tokens) sampling.max_tokens = request.max_output_tokens;
  if (request.temperature !== null && request.temperature !== undefined) sampling.temperature = request.temperature;
  if (request.top_p !== null && request.top_p !== undefined) sampling.top_p = request.top_p;
  if (request.top_k !== null && request.top_k !== undefined) sampling.top_k = request.top_k;
  if (request.seed !== null && request.seed !== undefined) sampling.seed = request.seed;

  const pivot: PivotRequest = {
    model: request.model,
    messages: builder.messages,
    tools,
    sampling,
    stream: request.stream ?? false,
    render_hints: { ...hints },
  };
  const toolChoice = pivotToolChoice(request.tool_choice);
  if (toolChoice !== undefined) pivot.tool_choice = toolChoice;
  const thinking = thinkingFromEffort(request.reasoning?.effort);
  if (thinking !== undefined) pivot.thinking = thinking;
  return pivot;
}
