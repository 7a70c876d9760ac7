// Why: vLLM's POST /v1/chat/completions, faithfully: prompt ids of the real chat template,
// `return_token_ids` (top-level `prompt_token_ids`, `choices[i].token_ids`; in streams the prompt
// ids on the first chunk and each chunk's delta ids), `logprobs`/`top_logprobs`, reasoning and
// hermes tool-call parsing, finish reasons, `stop` strings (`stop_reason` = the matched string),
// `stream_options.include_usage`.
import type { Qwen3Output } from "../tokenizer/qwen3-output.ts";
import { chatLogprobs, prepareChat, type PreparedChat } from "./chat-generation.ts";
import { nowSeconds, randomHex, sseResponse, type EngineContext } from "./context.ts";
import { sleep } from "./faults.ts";
import { tokenDeltas } from "./stream-deltas.ts";

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
  const usage = {
    prompt_tokens: promptIds.length,
    total_tokens: promptIds.length + g.outputIds.length,
    completion_tokens: g.outputIds.length,
    prompt_tokens_details: null,
  };
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
    send(
      chunk(
        [{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }],
        meta.wantIds ? { prompt_token_ids: chat.promptIds } : {},
      ),
    );
    for (const [i, d] of deltas.entries()) {
      if (signal.aborted) return;
      await sleep(ctx.options.msPerToken);
      const last = i === deltas.length - 1;
      const delta: Record<string, unknown> = {};
      if (d.reasoning) Object.assign(delta, { reasoning: d.reasoning, reasoning_content: d.reasoning });
      if (d.content) delta.content = d.content;
      if (d.toolCalls.length > 0) {
        delta.tool_calls = d.toolCalls.map(({ index, call }) => ({
          index,
          id: call.id,
          type: "function",
          function: { name: call.name, arguments: call.arguments },
        }));
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
