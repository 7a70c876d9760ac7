// Why: SGLang's server as Polar's `sglang` backend meets it: native /generate, and the OpenAI
// chat endpoint with SGLang's token extensions, `reasoning_content`, `matched_stop`, and SGLang's
// flat error body.
//
// As sgl-project/sglang python/sglang/srt/entrypoints/openai/serving_chat.py has it:
// `_build_chat_response` sets `choices[].prompt_token_ids` only for `return_prompt_token_ids` and
// `choices[].meta_info` only for `return_meta_info`; it never fills `choices[].token_ids`, although
// protocol.py declares `return_token_ids` on the request and `token_ids` on the choice (accepted,
// no effect; the sampled ids are meta_info's output_token_logprobs). `_convert_to_internal_request`
// refuses streaming with `return_prompt_token_ids` or `return_meta_info` only. `matched_stop` is
// finish_reason["matched"] (EOS id, or the stop string); `_process_tool_calls` turns a "stop" with
// parsed tool calls into "tool_calls" with matched None (the stream's last chunk keeps it).
import { Hono } from "hono";
import { chatLogprobs, prepareChat, type PreparedChat } from "./chat-generation.ts";
import { nowSeconds, randomHex, sseResponse, type EngineContext } from "./context.ts";
import { asEngineError, EngineError, sglangErrorBody } from "./engine-error.ts";
import { sleep } from "./faults.ts";
import { readJson } from "./request.ts";
import { sglangGenerate, sglangMetaInfo } from "./sglang-generate.ts";
import { tokenDeltas } from "./stream-deltas.ts";
import { tokenize } from "./tokenize-routes.ts";

const sglangToolCallId = () => `call_${randomHex(12)}`;

const STREAM_REFUSED = ["return_prompt_token_ids", "return_meta_info"] as const;

async function sglangChat(ctx: EngineContext, body: unknown, signal: AbortSignal): Promise<Response> {
  const startedAt = performance.now();
  if (typeof body === "object" && body !== null && (body as { stream?: unknown }).stream === true) {
    for (const flag of STREAM_REFUSED) {
      if ((body as Record<string, unknown>)[flag] === true) {
        throw new EngineError("bad_request", `${flag} is not supported with streaming. Please set stream=false when using ${flag}=true.`);
      }
    }
  }
  const chat = await prepareChat(ctx, body, signal, sglangToolCallId);
  const { request, promptIds, generation: g, parsed } = chat;
  const id = randomHex();
  const created = nowSeconds();
  const usage = {
    prompt_tokens: promptIds.length,
    total_tokens: promptIds.length + g.outputIds.length,
    completion_tokens: g.outputIds.length,
    prompt_tokens_details: null,
    reasoning_tokens: 0,
  };
  const matchedStop = g.finishReason === "stop" ? (g.stopString ?? ctx.model.tokenizer.eosTokenId) : null;
  const toolCalls = parsed.toolCalls.map((c, index) => ({ id: c.id, index, type: "function", function: { name: c.name, arguments: c.arguments } }));
  if (request.stream) return sglangChatStream(ctx, chat, { id, created, usage, matchedStop }, signal);

  await sleep(ctx.options.ttftMs + ctx.options.msPerToken * g.outputIds.length);
  const wantLogprobs = request.logprobs === true;
  const meta = request.return_meta_info
    ? sglangMetaInfo(ctx, g, { rid: id, promptIds, returnLogprob: wantLogprobs, topLogprobsNum: request.top_logprobs ?? 0, textInLogprobs: true, startedAt })
    : undefined;
  return Response.json({
    id,
    object: "chat.completion",
    created,
    model: ctx.options.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: parsed.content,
          reasoning_content: parsed.reasoning ?? null,
          tool_calls: toolCalls.length > 0 ? toolCalls : null,
        },
        logprobs: wantLogprobs ? chatLogprobs(ctx, g, 0, g.outputIds.length) : null,
        finish_reason: chat.finishReason,
        matched_stop: chat.finishReason === "tool_calls" ? null : matchedStop,
        ...(request.return_prompt_token_ids ? { prompt_token_ids: promptIds } : {}),
        ...(meta ? { meta_info: meta } : {}),
      },
    ],
    usage,
    metadata: { weight_version: "default" },
  });
}

function sglangChatStream(
  ctx: EngineContext,
  chat: PreparedChat,
  meta: { id: string; created: number; usage: Record<string, unknown>; matchedStop: number | string | null },
  signal: AbortSignal,
): Response {
  const { generation: g, parsed, request } = chat;
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    JSON.stringify({ id: meta.id, object: "chat.completion.chunk", created: meta.created, model: ctx.options.model, choices, ...extra });
  const deltas = tokenDeltas(ctx.model.tokenizer, g.outputIds, parsed, g.text);
  return sseResponse(signal, async (send) => {
    await sleep(ctx.options.ttftMs);
    send(chunk([{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null, matched_stop: null }]));
    for (const [i, d] of deltas.entries()) {
      await sleep(ctx.options.msPerToken);
      const last = i === deltas.length - 1;
      const delta: Record<string, unknown> = {};
      if (d.reasoning) delta.reasoning_content = d.reasoning;
      if (d.content) delta.content = d.content;
      if (d.toolCalls.length > 0) {
        delta.tool_calls = d.toolCalls.map(({ index, call }) => ({
          index,
          id: call.id,
          type: "function",
          function: { name: call.name, arguments: call.arguments },
        }));
      }
      if (Object.keys(delta).length === 0 && !last) continue;
      send(chunk([{ index: 0, delta, logprobs: null, finish_reason: last ? chat.finishReason : null, matched_stop: last ? meta.matchedStop : null }]));
    }
    if (request.stream_options?.include_usage) send(chunk([], { usage: meta.usage }));
    send("[DONE]");
  });
}

export function sglangApp(ctx: EngineContext): Hono {
  const app = new Hono();
  app.onError((err, c) => {
    const e = asEngineError(err);
    // /generate answers `{error:{message}}`; the OpenAI endpoints SGLang's flat ErrorResponse.
    if (c.req.path === "/generate") return Response.json({ error: { message: e.message } }, { status: e.status });
    return Response.json(sglangErrorBody(e), { status: e.status });
  });
  app.get("/health", () => new Response(null, { status: 200 }));
  app.get("/health_generate", () => new Response(null, { status: 200 }));
  app.get("/get_model_info", () => Response.json({ model_path: ctx.options.model, tokenizer_path: ctx.model.tokenizer.folder.path, is_generation: true }));
  app.get("/v1/models", () =>
    Response.json({
      object: "list",
      data: [
        { id: ctx.options.model, object: "model", created: nowSeconds(), owned_by: "sglang", root: ctx.options.model, max_model_len: ctx.options.maxModelLen },
      ],
    }),
  );
  app.post("/generate", async (c) => sglangGenerate(ctx, await readJson(c.req.raw), c.req.raw.signal));
  app.post("/v1/chat/completions", async (c) => sglangChat(ctx, await readJson(c.req.raw), c.req.raw.signal));
  app.post("/tokenize", async (c) => tokenize(ctx, await readJson(c.req.raw)));
  return app;
}
