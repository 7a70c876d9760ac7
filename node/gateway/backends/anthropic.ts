// Why: offline data generation with a teacher behind an Anthropic-compatible Messages API (the
// Anthropic API, or any server speaking its dialect): the pivot request becomes a Messages body —
// system text apart, tool results as user `tool_result` blocks, roles alternating — and the
// answer's blocks come back as the pivot's content, reasoning and tool calls. Such APIs return no
// token ids, so calls are recorded as text only and say so in their notes.
import { z } from "zod";
import type { EngineCall, EngineResult } from "./backend.ts";
import { EngineBackend } from "./engine-backend.ts";
import type { EngineClient } from "./engine-client.ts";
import type { FinishReason, PivotMessage, PivotRequest, PivotResponse } from "../pivot.ts";

/** The Messages API version Polar speaks (the only one Anthropic has published). */
export const ANTHROPIC_VERSION = "2023-06-01";
/** Anthropic requires `max_tokens`; used when neither the harness nor the gateway's cap set one. */
export const DEFAULT_MAX_TOKENS = 4096;

type Block = Record<string, unknown>;
interface WireMessage {
  role: "user" | "assistant";
  content: Block[];
}

const WireBlock = z.looseObject({ type: z.string() });
const WireMessageResponse = z.object({
  id: z.string().optional(),
  content: z.array(WireBlock),
  stop_reason: z.string().nullable().optional(),
  stop_sequence: z.string().nullable().optional(),
  usage: z
    .looseObject({
      input_tokens: z.number().int(),
      output_tokens: z.number().int(),
      cache_creation_input_tokens: z.number().int().nullable().optional(),
      cache_read_input_tokens: z.number().int().nullable().optional(),
    })
    .optional(),
});
const WireModels = z.object({ data: z.array(z.object({ id: z.string() })) });

/** A tool call's arguments as the JSON object `tool_use.input` must be ({} when they are not one). */
function toolInput(argumentsText: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(argumentsText);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function blocksOf(message: PivotMessage): Block[] {
  switch (message.role) {
    case "tool":
      return [{ type: "tool_result", tool_use_id: message.tool_call_id ?? "", content: message.content }];
    case "assistant": {
      // Earlier reasoning is not sent back: Anthropic accepts thinking blocks only with its own signatures.
      const blocks: Block[] = message.content !== "" ? [{ type: "text", text: message.content }] : [];
      for (const call of message.tool_calls ?? []) blocks.push({ type: "tool_use", id: call.id, name: call.name, input: toolInput(call.arguments) });
      return blocks;
    }
    default:
      return message.content !== "" ? [{ type: "text", text: message.content }] : [];
  }
}

/** Pivot messages → alternating Messages turns (consecutive same-role turns merged, empty ones dropped). */
export function anthropicMessages(messages: readonly PivotMessage[]): { system: string; messages: WireMessage[] } {
  const system: string[] = [];
  const out: WireMessage[] = [];
  for (const message of messages) {
    if (message.role === "system") {
      if (message.content !== "") system.push(message.content);
      continue;
    }
    const role = message.role === "assistant" ? "assistant" : "user";
    const blocks = blocksOf(message);
    if (blocks.length === 0) continue;
    const last = out[out.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  }
  return { system: system.join("\n\n"), messages: out };
}

export function anthropicBody(request: PivotRequest, servedModel: string | undefined): Record<string, unknown> {
  const { system, messages } = anthropicMessages(request.messages);
  const s = request.sampling;
  const body: Record<string, unknown> = { model: servedModel ?? request.model, max_tokens: s.max_tokens ?? DEFAULT_MAX_TOKENS, messages, stream: false };
  if (system !== "") body.system = system;
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({ name: t.name, ...(t.description !== undefined && { description: t.description }), input_schema: t.parameters }));
  }
  if (request.tool_choice !== undefined) {
    const choice = request.tool_choice;
    body.tool_choice =
      choice === "auto"
        ? { type: "auto" }
        : choice === "required"
          ? { type: "any" }
          : choice === "none"
            ? { type: "none" }
            : { type: "tool", name: choice.name };
  }
  if (s.temperature !== undefined) body.temperature = s.temperature;
  if (s.top_p !== undefined) body.top_p = s.top_p;
  if (s.top_k !== undefined) body.top_k = s.top_k;
  if (s.stop !== undefined && s.stop.length > 0) body.stop_sequences = s.stop;
  return body;
}

function finishReason(stopReason: string | null | undefined, hasToolCalls: boolean): FinishReason {
  if (stopReason === "max_tokens") return "length";
  if (stopReason === "tool_use" || hasToolCalls) return "tool_calls";
  return "stop";
}

export function pivotFromAnthropic(reply: z.infer<typeof WireMessageResponse>, model: string): PivotResponse {
  const text: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: PivotResponse["tool_calls"] = [];
  for (const block of reply.content) {
    if (block.type === "text" && typeof block.text === "string") text.push(block.text);
    if (block.type === "thinking" && typeof block.thinking === "string") reasoning.push(block.thinking);
    if (block.type === "tool_use" && typeof block.id === "string" && typeof block.name === "string") {
      toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
    }
  }
  const usage = reply.usage;
  const finish = finishReason(reply.stop_reason, toolCalls.length > 0);
  return {
    id: reply.id ?? `msg_${crypto.randomUUID()}`,
    model,
    content: text.join(""),
    ...(reasoning.length > 0 ? { reasoning: reasoning.join("\n") } : {}),
    tool_calls: toolCalls,
    finish_reason: finish,
    ...(finish === "stop" && typeof reply.stop_sequence === "string" ? { stop_sequence: reply.stop_sequence } : {}),
    usage: {
      prompt_tokens: (usage?.input_tokens ?? 0) + (usage?.cache_creation_input_tokens ?? 0) + (usage?.cache_read_input_tokens ?? 0),
      completion_tokens: usage?.output_tokens ?? 0,
    },
  };
}

export class AnthropicBackend extends EngineBackend {
  readonly name = "anthropic";

  /** `client` must carry no API key of its own: Anthropic's key goes in `x-api-key`, not `Authorization`. */
  constructor(
    client: EngineClient,
    private readonly options: { servedModel?: string; apiKey?: string },
  ) {
    super(client);
  }

  private headers(): Record<string, string> {
    return { "anthropic-version": ANTHROPIC_VERSION, ...(this.options.apiKey ? { "x-api-key": this.options.apiKey } : {}) };
  }

  async complete(call: EngineCall): Promise<EngineResult> {
    const reply = await this.client.request({
      sessionId: call.sessionId,
      signal: call.signal,
      path: "/v1/messages",
      body: anthropicBody(call.request, this.options.servedModel),
      schema: WireMessageResponse,
      headers: this.headers(),
    });
    return {
      response: pivotFromAnthropic(reply.data, call.request.model),
      tokens: null,
      engineUrl: reply.engineUrl,
      notes: { text_only: true, ...(reply.attempts > 1 && { attempts: reply.attempts }) },
    };
  }

  override async listModels(): Promise<string[]> {
    if (this.options.servedModel) return [this.options.servedModel];
    const reply = await this.client.request({
      sessionId: null,
      signal: new AbortController().signal,
      method: "GET",
      path: "/v1/models",
      schema: WireModels,
      headers: this.headers(),
    });
    return reply.data.data.map((m) => m.id);
  }
}
