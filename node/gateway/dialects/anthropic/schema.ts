// Why: the Anthropic Messages request body is a trust boundary; these zod schemas accept what
// real clients send (Claude Code, Qwen Code, Pi, the official SDK) and ignore what Polar cannot
// use (cache_control, citations, images, server tools, beta-only fields) instead of rejecting it.
import { z } from "zod";

const JsonObject = z.record(z.string(), z.unknown());

/** A block type Polar has no use for (image, document, redacted_thinking, server tool blocks…). */
export const IGNORED_BLOCK = { type: "ignored" } as const;
type IgnoredBlock = typeof IGNORED_BLOCK;

/**
 * Blocks of the listed types are validated strictly; any other `type` becomes IGNORED_BLOCK, so a
 * new Anthropic block type does not break old clients' requests.
 */
function tolerantBlock<const T extends readonly [z.ZodObject, ...z.ZodObject[]]>(known: T) {
  const schema = z.discriminatedUnion("type", known);
  const types = new Set(known.map((option) => (option.shape as { type: z.ZodLiteral<string> }).type.value));
  return z.unknown().transform((value, ctx): z.infer<typeof schema> | IgnoredBlock => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      ctx.addIssue({ code: "custom", message: "expected a content block object" });
      return z.NEVER;
    }
    const type = (value as { type?: unknown }).type;
    if (typeof type !== "string") {
      ctx.addIssue({ code: "custom", message: "expected a string", path: ["type"] });
      return z.NEVER;
    }
    if (!types.has(type)) return IGNORED_BLOCK;
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
    return z.NEVER;
  });
}

export const TextBlock = z.object({ type: z.literal("text"), text: z.string() });

const TextOrIgnoredBlock = tolerantBlock([TextBlock]);

export const ToolUseBlock = z.object({
  type: z.literal("tool_use"),
  id: z.string(),
  name: z.string(),
  input: JsonObject.default({}),
});

export const ToolResultBlock = z.object({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(TextOrIgnoredBlock)]).optional(),
  is_error: z.boolean().nullish(),
});

export const ThinkingBlock = z.object({ type: z.literal("thinking"), thinking: z.string() });

const MessageBlock = tolerantBlock([TextBlock, ToolUseBlock, ToolResultBlock, ThinkingBlock]);
export type MessageBlock = z.infer<typeof MessageBlock>;

export const MESSAGE_ROLES = ["user", "assistant", "system"] as const;

export const InputMessage = z.object({
  role: z.enum(MESSAGE_ROLES),
  content: z.union([z.string(), z.array(MessageBlock)]),
});
export type InputMessage = z.infer<typeof InputMessage>;

export const SystemPrompt = z.union([z.string(), z.array(TextOrIgnoredBlock)]);
export type SystemPrompt = z.infer<typeof SystemPrompt>;

/**
 * Custom tools carry `input_schema`; server tools (web_search_…, bash_…, text_editor_…) carry a
 * versioned `type` and no schema, and are dropped by the converter.
 */
export const InputTool = z
  .object({
    name: z.string(),
    type: z.string().nullish(),
    description: z.string().nullish(),
    input_schema: JsonObject.nullish(),
  })
  .refine((tool) => tool.input_schema != null || (tool.type != null && tool.type !== "custom"), {
    message: "required for custom tools",
    path: ["input_schema"],
  });
export type InputTool = z.infer<typeof InputTool>;

export const ToolChoice = z.discriminatedUnion("type", [
  z.object({ type: z.literal("auto") }),
  z.object({ type: z.literal("any") }),
  z.object({ type: z.literal("none") }),
  z.object({ type: z.literal("tool"), name: z.string() }),
]);
export type ToolChoice = z.infer<typeof ToolChoice>;

export const THINKING_TYPES = ["enabled", "adaptive", "disabled"] as const;
export const ThinkingConfig = z.object({ type: z.enum(THINKING_TYPES), budget_tokens: z.number().nullish() });

const requestFields = {
  model: z.string().min(1),
  messages: z.array(InputMessage),
  system: SystemPrompt.nullish(),
  tools: z.array(InputTool).nullish(),
  tool_choice: ToolChoice.nullish(),
  thinking: ThinkingConfig.nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  top_k: z.number().int().nullish(),
  stop_sequences: z.array(z.string()).nullish(),
  stream: z.boolean().nullish(),
};

/** `POST /v1/messages`. Unknown fields (metadata, context_management, output_config, …) are dropped. */
export const MessagesRequest = z.object({ ...requestFields, max_tokens: z.number().int().positive() });
export type MessagesRequest = z.infer<typeof MessagesRequest>;

/** `POST /v1/messages/count_tokens`: the same body without `max_tokens`. */
export const CountTokensRequest = z.object({ ...requestFields, max_tokens: z.number().int().positive().nullish() });
export type CountTokensRequest = z.infer<typeof CountTokensRequest>;
