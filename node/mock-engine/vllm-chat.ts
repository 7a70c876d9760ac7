// Why: vLLM's POST /v1/chat/completions, faithfully: prompt ids of the real chat template,
// `return_token_ids` (top-level `prompt_token_ids`, `choices[i].token_ids`; in streams the prompt
// ids on the first chunk and each chunk's delta ids), `logprobs`/`top_logprobs`, reasoning and
// hermes tool-call parsing, finish reasons, `stop` strings (`stop_reason` = the matched string),
// `stream_options.include_usage`.
import { parseQwen3Output, type Qwen3Output } from "../tokenizer/qwen3-output.ts";
import {
  ChatCompletionRequest,
  renderOptions,
  requestedMaxTokens,
  templateMessages,
  toolParsingActive,
} from "./chat-request.ts";
import { nowSeconds, randomHex, sseResponse, type EngineContext } from "./context.ts";
import { EngineError } from "./engine-error.ts";
import { sleep } from "./faults.ts";
import type { Generation } from "./model.ts";
import { checkModel, parseBody } from "./request.ts";
import { stopList } from "./stop-strings.ts";
import { tokenDeltas } from "./stream-deltas.ts";

export interface PreparedChat {
  request: ChatCompletionRequest;
  promptIds: number[];
  generation: Generation;
  parsed: Qwen3Output;
  finishReason: "stop" | "length" | "tool_calls";
}

/** Shared by the vLLM and SGLang chat endpoints: validate, render, admit, generate, parse. */
export async function prepareChat(ctx: EngineContext, body: unknown, signal: AbortSignal, toolCallId: () => string): Promise<PreparedChat> {
  const request = parseBody(ChatCompletionRequest, body);
  checkModel(ctx, request.model);
  if ((request.n ?? 1) !== 1) throw new EngineError("bad_request", "Only n=1 is supported by the mock engine.", "n");
  const stop = stopList(request.stop);
  await ctx.gate.admit(signal);
  const { ids: promptIds } = ctx.model.renderChat(templateMessages(request), renderOptions(request));
  const generation = ctx.model.generate({
    promptIds,
    maxTokens: requestedMaxTokens(request),
    requestSeed: request.seed ?? undefined,
    topLogprobs: request.logprobs ? (request.top_logprobs ?? 0) : 0,
    stop,
    keepStopString: (ctx.options.dialect === "sglang" ? request.no_stop_trim : request.include_stop_str_in_output) === true,
  });
  const parsed = parseQwen3Output(generation.text, { parseToolCalls: toolParsingActive(request), makeToolCallId: toolCallId });
  const finishReason = parsed.toolCalls.length > 0 && generation.finishReason === "stop" ? "tool_calls" : generation.finishReason;
  return { request, promptIds, generation, parsed, finishReason };
}

/** OpenAI chat logprobs content for output positions [from, to). */
export function chatLogprobs(ctx: EngineContext, g: Generation, from: number, to: number) {
  const entry = (id: number, logprob: number) => ({ token: ctx.model.tokenText(id), logprob, bytes: ctx.model.tokenTextBytes(id) });
  const content = [];
  for (let i = from; i < to; i++) {
    content.push({ ...entry(g.outputIds[i]!, g.logprobs[i]!), top_logprobs: (g.top[i] ?? []).map((t) => entry(t.id, t.logprob)) });
  }
  return { content };
}

function wireToolCalls(parsed: Qwen3Output) {
  return parsed.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
}

const vllmToolCallId = () => `chatcmpl-tool-${randomHex()}`;

export async function vllmChatCompletion(ctx: EngineContext, body: unknown, signal: AbortSignal): Promise<Response> {
  const chat = await prepareChat(ctx, body, signal, vllmToolCallId);
  const { request, promptIds, generation: g, parsed } = chat;
  const id = `chatcmpl-${randomHex()}`;
  const created = nowSeconds();
  const model = ctx.options.model;
  const usage = { prompt_tokens: promptIds.length, total_tokens: promptIds.length + g.outputIds.length, completion_tokens: g.outputIds.length, prompt_tokens_details: null };
  const wantLogprobs = request.logprobs === true;
  const wantIds = request.return_token_ids === true;

  if (request.stream) return streamChat(ctx, chat, { id, created, model, usage, wantLogprobs, wantIds }, signal);

  await sleep(ctx.options.ttftMs + ctx.options.msPerToken * g.outputIds.length);
  const toolCalls = wireToolCalls(parsed);
  const reasoning = parsed.reasoning ?? null;
  return Response.json({
    id,
    object: "chat.completion",
    created,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: parsed.content === "" ? null : parsed.content,
          refusal: null,
          annotations: null,
          audio: null,
          function_call: null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          // vLLM ≥ 0.11 names it `reasoning`; earlier releases `reasoning_content`: both are sent.
          reasoning,
          reasoning_content: reasoning,
        },
        logprobs: wantLogprobs ? chatLogprobs(ctx, g, 0, g.outputIds.length) : null,
        finish_reason: chat.finishReason,
        // The matched stop string; null for EOS and length (no stop_token_ids support).
        stop_reason: g.stopString ?? null,
        token_ids: wantIds ? g.outputIds : null,
      },
    ],
    service_tier: null,
    system_fingerprint: null,
    usage,
    prompt_logprobs: null,
    prompt_token_ids: wantIds ? promptIds : null,
    kv_transfer_params: null,
  });
}

interface StreamMeta {
  id: string;
  created: number;
  model: string;
  usage: Record<string, unknown>;
  wantLogprobs: boolean;
  wantIds: boolean;
}

function streamChat(ctx: EngineContext, chat: PreparedChat, meta: StreamMeta, signal: AbortSignal): Response {
  const { generation: g, parsed, request } = chat;
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    JSON.stringify({ id: meta.id, object: "chat.completion.chunk", created: meta.created, model: meta.model, choices, ...extra });
  const deltas = tokenDeltas(ctx.model.tokenizer, g.outputIds, parsed, g.text);
  return sseResponse(signal, async (send) => {
    await sleep(ctx.options.ttftMs);
    send(chunk([{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }], meta.wantIds ? { prompt_token_ids: chat.promptIds } : {}));
    for (const [i, d] of deltas.entries()) {
      if (signal.aborted) return;
      await sleep(ctx.options.msPerToken);
      const last = i === deltas.length - 1;
      const delta: Record<string, unknown> = {};
      if (d.reasoning) Object.assign(delta, { reasoning: d.reasoning, reasoning_content: d.reasoning });
      if (d.content) delta.content = d.content;
      if (d.toolCalls.length > 0) {
        delta.tool_calls = d.toolCalls.map(({ index, call }) => ({ index, id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }));
      }
      const empty = Object.keys(delta).length === 0;
      if (empty && !last && !meta.wantIds && !meta.wantLogprobs) continue;
      send(
        chunk([
          {
            index: 0,
            delta,
            logprobs: meta.wantLogprobs ? chatLogprobs(ctx, g, i, i + 1) : null,
            finish_reason: last ? chat.finishReason : null,
            ...(last ? { stop_reason: g.stopString ?? null } : {}),
            ...(meta.wantIds ? { token_ids: [g.outputIds[i]] } : {}),
          },
        ]),
      );
    }
    if (request.stream_options?.include_usage) send(chunk([], { usage: meta.usage }));
    send("[DONE]");
  });
}
