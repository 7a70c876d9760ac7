// Why: vLLM, SGLang and hosted APIs all accept OpenAI Chat Completions; converting the pivot to
// that wire shape (and the common part of the answer back) once keeps the three chat backends to
// their engine-specific extras only.
import { z } from "zod";
import { PolarError } from "../../../protocol/errors.ts";
import type { FinishReason, PivotMessage, PivotRequest, PivotResponse, PivotToolCall, PivotUsage } from "../pivot.ts";

/** How assistant reasoning from earlier turns is handed back to the engine's chat template. */
export type ReasoningField = "reasoning_content" | "reasoning_and_content" | "omit";

export interface ChatBodyOptions {
  /** Served model name override. */
  model?: string;
  reasoningField: ReasoningField;
}

/** Pivot messages in OpenAI chat format. */
export function toOpenAiMessages(messages: readonly PivotMessage[], reasoningField: ReasoningField): Record<string, unknown>[] {
  return messages.map((m) => {
    switch (m.role) {
      case "system":
      case "user":
        return { role: m.role, content: m.content };
      case "tool":
        return {
          role: "tool",
          content: m.content,
          ...(m.tool_call_id !== undefined && { tool_call_id: m.tool_call_id }),
          ...(m.name !== undefined && { name: m.name }),
        };
      case "assistant": {
        const out: Record<string, unknown> = { role: "assistant", content: m.content };
        if (m.reasoning !== undefined && reasoningField !== "omit") {
          // vLLM: ChatCompletionRequest._normalize_messages_before renames `reasoning_content` to
          // `reasoning`, and chat_utils._parse_chat_message_content copies `reasoning` to
          // `reasoning_content` for the template (Qwen3 reads message.reasoning_content). Some vLLM
          // releases read only `reasoning`; SGLang reads `reasoning_content`. Sending both is safe.
          out.reasoning_content = m.reasoning;
          if (reasoningField === "reasoning_and_content") out.reasoning = m.reasoning;
        }
        if (m.tool_calls && m.tool_calls.length > 0) {
          out.tool_calls = m.tool_calls.map((c) => ({
            id: c.id,
            type: "function",
            function: { name: c.name, arguments: c.arguments },
          }));
        }
        return out;
      }
    }
  });
}

/** The OpenAI chat body shared by every chat backend (no engine extras). */
export function openAiChatBody(request: PivotRequest, options: ChatBodyOptions): Record<string, unknown> {
  const s = request.sampling;
  const body: Record<string, unknown> = {
    model: options.model ?? request.model,
    messages: toOpenAiMessages(request.messages, options.reasoningField),
    stream: false,
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      type: "function",
      function: { name: t.name, ...(t.description !== undefined && { description: t.description }), parameters: t.parameters },
    }));
  }
  if (request.tool_choice !== undefined) {
    body.tool_choice = typeof request.tool_choice === "string" ? request.tool_choice : { type: "function", function: { name: request.tool_choice.name } };
  }
  if (s.max_tokens !== undefined) body.max_tokens = s.max_tokens;
  if (s.temperature !== undefined) body.temperature = s.temperature;
  if (s.top_p !== undefined) body.top_p = s.top_p;
  if (s.stop !== undefined && s.stop.length > 0) body.stop = s.stop;
  if (s.seed !== undefined) body.seed = s.seed;
  return body;
}

/** Sampling extras vLLM and SGLang accept beyond OpenAI (`top_k`, thinking switch). */
export function engineChatExtras(request: PivotRequest): Record<string, unknown> {
  const extras: Record<string, unknown> = {};
  if (request.sampling.top_k !== undefined) extras.top_k = request.sampling.top_k;
  if (request.thinking !== undefined) extras.chat_template_kwargs = { enable_thinking: request.thinking };
  return extras;
}

const WireToolCall = z.object({
  id: z.string().optional(),
  type: z.string().optional(),
  function: z.object({ name: z.string(), arguments: z.union([z.string(), z.record(z.string(), z.unknown())]) }),
});

/** The message of a non-streaming chat choice. vLLM ≥0.10 names reasoning `reasoning`, older vLLM and SGLang `reasoning_content`. */
const WireChatMessage = z.object({
  content: z.string().nullable().optional(),
  reasoning: z.string().nullable().optional(),
  reasoning_content: z.string().nullable().optional(),
  tool_calls: z.array(WireToolCall).nullable().optional(),
});

const WireUsage = z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int() });

/** One choice of an OpenAI-compatible chat answer; engines extend it with their token fields. */
export const WireChatChoice = z.object({
  message: WireChatMessage,
  finish_reason: z.string().nullable().optional(),
});

/** An OpenAI-compatible chat answer whose choices follow `choice` (engines add token fields). */
export function wireChatResponse<C extends z.ZodType>(choice: C) {
  return z.object({
    id: z.string().optional(),
    choices: z.array(choice).min(1),
    usage: WireUsage.nullable().optional(),
  });
}

export const WireChatResponse = wireChatResponse(WireChatChoice);

/** Builds the pivot response from an OpenAI chat message plus counts. */
export function pivotFromChatMessage(args: {
  id: string | undefined;
  model: string;
  message: z.infer<typeof WireChatMessage>;
  finishReason: string | null | undefined;
  usage: PivotUsage;
  /** What the engine says ended generation (vLLM `stop_reason`, SGLang `matched_stop`). */
  matchedStop?: string | number | null;
}): PivotResponse {
  const toolCalls: PivotToolCall[] = (args.message.tool_calls ?? []).map((c, i) => ({
    id: c.id ?? `call_${i}`,
    name: c.function.name,
    arguments: typeof c.function.arguments === "string" ? c.function.arguments : JSON.stringify(c.function.arguments),
  }));
  const reasoning = args.message.reasoning ?? args.message.reasoning_content ?? undefined;
  const finishReason = finishReasonOf(args.finishReason, toolCalls.length > 0);
  const stopSequence = stopSequenceOf(finishReason, args.matchedStop);
  return {
    id: args.id ?? `chatcmpl-${crypto.randomUUID()}`,
    model: args.model,
    content: args.message.content ?? "",
    ...(reasoning ? { reasoning } : {}),
    tool_calls: toolCalls,
    finish_reason: finishReason,
    ...(stopSequence !== undefined && { stop_sequence: stopSequence }),
    usage: args.usage,
  };
}

/**
 * The stop string that ended generation: engines report what matched (vLLM's `stop_reason`,
 * SGLang's `matched_stop` / `finish_reason.matched`) as the string, or as a token id when a stop
 * token (EOS included, for SGLang) ended it — only a string is a stop sequence.
 */
export function stopSequenceOf(finishReason: FinishReason, matched: string | number | null | undefined): string | undefined {
  return finishReason === "stop" && typeof matched === "string" ? matched : undefined;
}

/**
 * Engine finish reasons ("stop", "length", "tool_calls", …) onto the pivot's three. "abort" is not
 * a finish: vLLM's FinishReason.ABORT ("aborted by client" / for another reason) and SGLang's
 * FINISH_ABORT (an error finish: scheduler gone, request aborted, e.g. around a weight update)
 * both mean the engine cut the sample off, so it must not be recorded as a clean answer a trainer
 * would learn from: the call fails as engine_error (a 5xx the harness retries).
 */
export function finishReasonOf(engineReason: string | null | undefined, hasToolCalls: boolean, engineMessage?: string): FinishReason {
  if (engineReason === "abort") {
    throw new PolarError("engine_error", `engine aborted the generation before it finished${engineMessage ? ` (${engineMessage})` : ""}`, {
      finishReason: engineReason,
    });
  }
  if (engineReason === "length") return "length";
  if (hasToolCalls) return "tool_calls";
  return "stop";
}
