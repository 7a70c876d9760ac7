// Why: the OpenAI chat-completions request as vLLM and SGLang accept it (zod at the boundary),
// and its conversion to the chat template's input the way vLLM does it: text parts joined with
// "\n", null content → "", `reasoning`/`reasoning_content` both honoured, tool-call arguments
// JSON text parsed into objects.
import { z } from "zod";
import { TOOL_CHOICES } from "../../protocol/chat.ts";
import type { RenderOptions, TemplateMessage, TemplateTool } from "../tokenizer/chat-template.ts";
import { parseArguments } from "../tokenizer/pivot-to-template.ts";

const ContentPart = z.object({ type: z.string(), text: z.string().optional() }).passthrough();

const WireToolCall = z
  .object({
    id: z.string().optional(),
    type: z.literal("function").default("function"),
    function: z.object({ name: z.string(), arguments: z.union([z.string(), z.record(z.string(), z.unknown())]) }),
  })
  .passthrough();

const WireMessage = z
  .object({
    role: z.string(),
    content: z.union([z.string(), z.array(ContentPart), z.null()]).optional(),
    reasoning_content: z.string().nullable().optional(),
    reasoning: z.string().nullable().optional(),
    tool_calls: z.array(WireToolCall).nullable().optional(),
    tool_call_id: z.string().optional(),
    name: z.string().optional(),
  })
  .passthrough();

const WireTool = z.object({
  type: z.literal("function").default("function"),
  function: z.object({
    name: z.string(),
    description: z.string().nullable().optional(),
    parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  }),
});

export const ChatCompletionRequest = z
  .object({
    model: z.string().optional(),
    messages: z.array(WireMessage).min(1),
    tools: z.array(WireTool).nullable().optional(),
    tool_choice: z
      .union([z.enum(TOOL_CHOICES), z.object({}).passthrough()])
      .nullable()
      .optional(),
    max_tokens: z.number().int().nullable().optional(),
    max_completion_tokens: z.number().int().nullable().optional(),
    seed: z.number().int().nullable().optional(),
    logprobs: z.boolean().nullable().optional(),
    top_logprobs: z.number().int().min(0).nullable().optional(),
    n: z.number().int().nullable().optional(),
    stream: z.boolean().nullable().optional(),
    stream_options: z.object({ include_usage: z.boolean().nullable().optional() }).passthrough().nullable().optional(),
    add_generation_prompt: z.boolean().optional(),
    chat_template_kwargs: z.record(z.string(), z.unknown()).nullable().optional(),
    stop: z
      .union([z.string(), z.array(z.string())])
      .nullable()
      .optional(),
    // vLLM extensions
    return_token_ids: z.boolean().nullable().optional(),
    include_stop_str_in_output: z.boolean().optional(),
    // SGLang extensions (its ChatCompletionRequest also declares `return_token_ids`)
    no_stop_trim: z.boolean().optional(),
    return_prompt_token_ids: z.boolean().optional(),
    return_meta_info: z.boolean().optional(),
    separate_reasoning: z.boolean().optional(),
  })
  .passthrough();
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

function textOf(content: z.infer<typeof WireMessage>["content"]): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content.flatMap((p) => (p.text !== undefined ? [p.text] : [])).join("\n");
}

export function templateMessages(request: ChatCompletionRequest): TemplateMessage[] {
  return request.messages.map((m) => {
    const out: TemplateMessage = { role: m.role, content: textOf(m.content) };
    const reasoning = m.reasoning ?? m.reasoning_content;
    if (reasoning !== undefined && reasoning !== null) out.reasoning_content = reasoning;
    if (m.tool_calls && m.tool_calls.length > 0) {
      out.tool_calls = m.tool_calls.map((c) => ({
        ...(c.id !== undefined ? { id: c.id } : {}),
        type: "function",
        function: {
          name: c.function.name,
          arguments: typeof c.function.arguments === "string" ? parseArguments(c.function.arguments) : c.function.arguments,
        },
      }));
    }
    if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
    if (m.name !== undefined) out.name = m.name;
    return out;
  });
}

export function templateTools(request: ChatCompletionRequest): TemplateTool[] {
  return (request.tools ?? []).map((t) => ({
    type: "function",
    function: { name: t.function.name, description: t.function.description ?? null, parameters: t.function.parameters ?? null },
  }));
}

export function renderOptions(request: ChatCompletionRequest): RenderOptions {
  const kwargs = { ...(request.chat_template_kwargs ?? {}) };
  const thinking = kwargs.enable_thinking;
  delete kwargs.enable_thinking;
  return {
    tools: templateTools(request),
    addGenerationPrompt: request.add_generation_prompt ?? true,
    enableThinking: typeof thinking === "boolean" ? thinking : undefined,
    templateKwargs: kwargs,
  };
}

/** vLLM runs the tool parser when tools are offered and tool_choice is not "none". */
export function toolParsingActive(request: ChatCompletionRequest): boolean {
  return (request.tools?.length ?? 0) > 0 && request.tool_choice !== "none";
}

export function requestedMaxTokens(request: ChatCompletionRequest): number | undefined {
  return request.max_completion_tokens ?? request.max_tokens ?? undefined;
}
