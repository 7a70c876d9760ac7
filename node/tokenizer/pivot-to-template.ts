// Why: the gateway speaks the pivot (protocol/chat.ts Message / Tool, arguments as JSON text);
// the chat template wants the OpenAI/HF shape with arguments as objects. vLLM parses `arguments`
// JSON text into an object before rendering; this converter does the same so our prompt equals
// vLLM's.
import type { Message, Tool, ToolCall } from "../../protocol/chat.ts";
import type { TemplateMessage, TemplateTool, TemplateToolCall } from "./chat-template.ts";

export function pivotToTemplateMessages(messages: readonly Message[]): TemplateMessage[] {
  return messages.map((m) => {
    const out: TemplateMessage = { role: m.role, content: m.content };
    if (m.reasoning !== undefined) out.reasoning_content = m.reasoning;
    if (m.tool_calls && m.tool_calls.length > 0) out.tool_calls = m.tool_calls.map(templateToolCall);
    if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
    if (m.name !== undefined) out.name = m.name;
    return out;
  });
}

export function pivotToTemplateTools(tools: readonly Tool[]): TemplateTool[] {
  return tools.map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description ?? null, parameters: t.parameters },
  }));
}

function templateToolCall(call: ToolCall): TemplateToolCall {
  return { id: call.id, type: "function", function: { name: call.name, arguments: parseArguments(call.arguments) } };
}

/**
 * JSON text → object, like vLLM. Text that is not a JSON object stays a string, which the
 * template then writes verbatim (its `arguments is string` branch).
 */
export function parseArguments(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : text;
  } catch {
    return text;
  }
}
