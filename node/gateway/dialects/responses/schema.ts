// Why: the Responses request body is a trust boundary. Items and tools Polar uses are validated
// strictly; item and tool types it cannot use (images, web_search, custom, tool_search, item
// references, compaction…) are dropped instead of failing codex's or qwen's requests.
import { z } from "zod";
import { TOOL_CHOICES } from "../../../../protocol/chat.ts";
import { ReasoningEffort } from "../chat/schema.ts";

/** Marks an item or tool whose `type` Polar does not use. */
export const DROPPED = { type: "dropped" } as const;
export type Dropped = typeof DROPPED;

/**
 * Objects whose `type` (or, with `defaultType`, a missing `type`) is one of `known` are validated
 * against it; any other `type` becomes DROPPED so new OpenAI item kinds do not break clients.
 */
function tolerant<const T extends Record<string, z.ZodType>>(known: T, defaultType?: keyof T & string) {
  return z.unknown().transform((value, ctx): z.output<T[keyof T]> | Dropped => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      ctx.addIssue({ code: "custom", message: "expected an object" });
      return z.NEVER;
    }
    const declared = (value as { type?: unknown }).type;
    const type = declared === undefined ? defaultType : declared;
    if (typeof type !== "string") {
      ctx.addIssue({ code: "custom", message: "expected a string", path: ["type"] });
      return z.NEVER;
    }
    const schema = Object.hasOwn(known, type) ? known[type] : undefined;
    if (!schema) return DROPPED;
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data as z.output<T[keyof T]>;
    for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
    return z.NEVER;
  });
}

/** Text-bearing parts (`input_text`, `output_text`, `text`, `summary_text`, `reasoning_text`). */
const TextPart = z.object({ type: z.string(), text: z.string() });
const Part = tolerant({
  input_text: TextPart,
  output_text: TextPart,
  text: TextPart,
  summary_text: TextPart,
  reasoning_text: TextPart,
});
export type ResponsesPart = z.infer<typeof Part>;

const Content = z.union([z.string(), z.array(Part)]);
export type ResponsesContent = z.infer<typeof Content>;

const MESSAGE_ROLES = ["system", "developer", "user", "assistant"] as const;

const MessageItem = z.object({ type: z.literal("message").optional(), role: z.enum(MESSAGE_ROLES), content: Content });
const FunctionCallItem = z.object({
  type: z.literal("function_call"),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
  namespace: z.string().nullish(),
});
const FunctionCallOutputItem = z.object({
  type: z.literal("function_call_output"),
  call_id: z.string(),
  output: Content,
});
const ReasoningItem = z.object({
  type: z.literal("reasoning"),
  summary: z.array(Part).nullish(),
  content: z.array(Part).nullish(),
});

const InputItem = tolerant(
  { message: MessageItem, function_call: FunctionCallItem, function_call_output: FunctionCallOutputItem, reasoning: ReasoningItem },
  "message",
);
export type ResponsesInputItem = z.infer<typeof InputItem>;

const Parameters = z.record(z.string(), z.unknown()).nullish();

const FunctionTool = z.object({
  type: z.literal("function"),
  name: z.string(),
  description: z.string().nullish(),
  parameters: Parameters,
});
export type ResponsesFunctionTool = z.infer<typeof FunctionTool>;

const NamespaceTool = z.object({
  type: z.literal("namespace"),
  name: z.string(),
  tools: z.array(tolerant({ function: FunctionTool })),
});

const Tool = tolerant({ function: FunctionTool, namespace: NamespaceTool });
export type ResponsesTool = z.infer<typeof Tool>;

const ToolChoice = z.union([z.enum(TOOL_CHOICES), z.object({ type: z.string(), name: z.string().optional() })]);
export type ResponsesToolChoice = z.infer<typeof ToolChoice>;

export const ResponsesRequest = z.object({
  model: z.string(),
  input: z.union([z.string(), z.array(InputItem)]),
  instructions: z.string().nullish(),
  tools: z.array(Tool).nullish(),
  tool_choice: ToolChoice.nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  top_k: z.number().int().nullish(),
  seed: z.number().int().nullish(),
  stream: z.boolean().nullish(),
  reasoning: z.object({ effort: ReasoningEffort.nullish() }).nullish(),
});
export type ResponsesRequest = z.infer<typeof ResponsesRequest>;
