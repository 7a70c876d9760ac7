// Why: the internal "pivot" chat shape (DESIGN.md: one pivot, three dialects) is recorded with
// every call and read back by trajectory rebuilding and trainers, so it is a wire schema too.
import { z } from "zod";

export const ROLES = ["system", "user", "assistant", "tool"] as const;

export const ToolCall = z.object({
  id: z.string(),
  name: z.string(),
  /** JSON text of the arguments, exactly as the model produced it. */
  arguments: z.string(),
});
export type ToolCall = z.infer<typeof ToolCall>;

export const Message = z.object({
  role: z.enum(ROLES),
  /** Text content; multi-part content is joined (text parts only). */
  content: z.string(),
  /** Assistant reasoning ("thinking") text, passed back so the chat template can render it. */
  reasoning: z.string().optional(),
  tool_calls: z.array(ToolCall).optional(),
  /** For role "tool": the id of the call this result answers. */
  tool_call_id: z.string().optional(),
  /** For role "tool": the function name, when the dialect carries it. */
  name: z.string().optional(),
});
export type Message = z.infer<typeof Message>;

export const Tool = z.object({
  name: z.string(),
  description: z.string().optional(),
  /** JSON schema of the arguments; `{type:"object",properties:{}}` when the client sent none. */
  parameters: z.record(z.string(), z.unknown()),
});
export type Tool = z.infer<typeof Tool>;

/** The named tool-choice modes every dialect and engine API shares (OpenAI spelling). */
export const TOOL_CHOICES = ["auto", "none", "required"] as const;

export const ToolChoice = z.union([z.enum(TOOL_CHOICES), z.object({ name: z.string() })]);
export type ToolChoice = z.infer<typeof ToolChoice>;

export const Sampling = z.object({
  max_tokens: z.number().int().optional(),
  temperature: z.number().optional(),
  top_p: z.number().optional(),
  top_k: z.number().int().optional(),
  stop: z.array(z.string()).optional(),
  seed: z.number().int().optional(),
});
export type Sampling = z.infer<typeof Sampling>;

export const ChatRequest = z.object({
  model: z.string(),
  messages: z.array(Message),
  tools: z.array(Tool),
  tool_choice: ToolChoice.optional(),
  sampling: Sampling,
  /** Maps to the engine's `chat_template_kwargs.enable_thinking`; undefined = template default. */
  thinking: z.boolean().optional(),
  stream: z.boolean(),
  /**
   * Dialect-private facts the dialect needs again when rendering its answer (e.g. Chat's
   * `stream_options.include_usage`, the Responses namespace of a flattened tool). Backends ignore it.
   */
  render_hints: z.record(z.string(), z.unknown()).optional(),
});
export type ChatRequest = z.infer<typeof ChatRequest>;

export const FINISH_REASONS = ["stop", "length", "tool_calls"] as const;
export const FinishReason = z.enum(FINISH_REASONS);
export type FinishReason = z.infer<typeof FinishReason>;

export const Usage = z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int() });
export type Usage = z.infer<typeof Usage>;

export const ChatResponse = z.object({
  /** Response id, stable for one call (dialects derive their own ids from it). */
  id: z.string(),
  model: z.string(),
  content: z.string(),
  reasoning: z.string().optional(),
  tool_calls: z.array(ToolCall),
  finish_reason: FinishReason,
  /** The stop string that ended generation (finish_reason "stop"), when the engine reports it
   *  (vLLM's `stop_reason` when it is a string). Anthropic renders it as `stop_sequence`. */
  stop_sequence: z.string().optional(),
  usage: Usage,
});
export type ChatResponse = z.infer<typeof ChatResponse>;
