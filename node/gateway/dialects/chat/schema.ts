// Why: the Chat Completions body is a trust boundary. These schemas are strict on the fields Polar
// uses and tolerant of everything else (extra keys are ignored), so real harness requests (Qwen's
// array tool content, Pi's max_completion_tokens, parameter-less tools) parse without surprises.
import { z } from "zod";
import { TOOL_CHOICES } from "../../../../protocol/chat.ts";

/** A content part; only text parts carry text Polar uses (images and audio are dropped). */
const ContentPart = z.object({ type: z.string(), text: z.string().optional() });
export type ChatContentPart = z.infer<typeof ContentPart>;

const Content = z.union([z.string(), z.array(ContentPart)]);
export type ChatContent = z.infer<typeof Content>;

const ToolCall = z.object({
  id: z.string(),
  type: z.literal("function").optional(),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

const SystemMessage = z.object({ role: z.enum(["system", "developer"]), content: Content });
const UserMessage = z.object({ role: z.literal("user"), content: Content });
const AssistantMessage = z.object({
  role: z.literal("assistant"),
  content: Content.nullish(),
  tool_calls: z.array(ToolCall).nullish(),
  /** Reasoning passed back by the client (vLLM / DeepSeek spell it either way). */
  reasoning_content: z.string().nullish(),
  reasoning: z.string().nullish(),
});
const ToolMessage = z.object({
  role: z.literal("tool"),
  content: Content,
  tool_call_id: z.string(),
  name: z.string().optional(),
});

export const ChatMessage = z.discriminatedUnion("role", [SystemMessage, UserMessage, AssistantMessage, ToolMessage]);
export type ChatMessage = z.infer<typeof ChatMessage>;

/** Any `type` is accepted; only `function` tools (which must carry `function`) are offered to the model. */
const Tool = z
  .object({
    type: z.string(),
    function: z
      .object({
        name: z.string(),
        description: z.string().nullish(),
        parameters: z.record(z.string(), z.unknown()).nullish(),
      })
      .optional(),
  })
  .refine((tool) => tool.type !== "function" || tool.function !== undefined, {
    message: "a function tool needs a `function` object",
    path: ["function"],
  });
export type ChatTool = z.infer<typeof Tool>;

const ToolChoice = z.union([z.enum(TOOL_CHOICES), z.object({ type: z.literal("function"), function: z.object({ name: z.string() }) })]);

const REASONING_EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh"] as const;
export const ReasoningEffort = z.enum(REASONING_EFFORTS);
export type ReasoningEffort = z.infer<typeof ReasoningEffort>;

export const ChatCompletionRequest = z.object({
  model: z.string(),
  messages: z.array(ChatMessage).min(1),
  tools: z.array(Tool).nullish(),
  tool_choice: ToolChoice.nullish(),
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  top_k: z.number().int().nullish(),
  stop: z.union([z.string(), z.array(z.string())]).nullish(),
  seed: z.number().int().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  reasoning_effort: ReasoningEffort.nullish(),
  chat_template_kwargs: z.object({ enable_thinking: z.boolean().optional() }).nullish(),
});
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;
