// Why: vLLM's POST /v1/completions — the `tito` backend sends the prompt as token ids it rendered
// itself; text prompts work too. `return_token_ids` puts `prompt_token_ids` and `token_ids` on
// each choice; `logprobs: k` gives the legacy {tokens, token_logprobs, top_logprobs, text_offset}.
import { z } from "zod";
import { nowSeconds, randomHex, sseResponse, type EngineContext } from "./context.ts";
import { EngineError } from "./engine-error.ts";
import { sleep } from "./faults.ts";
import type { Generation } from "./model.ts";
import { checkModel, parseBody } from "./request.ts";
import { stopList } from "./stop-strings.ts";

const TokenIds = z.array(z.number().int().min(0));

const CompletionRequest = z
  .object({
    model: z.string().optional(),
    prompt: z.union([z.string(), TokenIds, z.array(z.union([z.string(), TokenIds])).length(1)]),
    max_tokens: z.number().int().nullable().optional(),
    seed: z.number().int().nullable().optional(),
    logprobs: z.number().int().min(0).nullable().optional(),
    stream: z.boolean().nullable().optional(),
    stream_options: z.object({ include_usage: z.boolean().nullable().optional() }).passthrough().nullable().optional(),
    return_token_ids: z.boolean().nullable().optional(),
    stop: z
      .union([z.string(), z.array(z.string())])
      .nullable()
      .optional(),
    include_stop_str_in_output: z.boolean().optional(),
    n: z.number().int().nullable().optional(),
  })
  .passthrough();

/**
 * vLLM's CompletionRequest declares `max_tokens: int | None = 16`: an absent field is 16, an
 * explicit null reaches `get_max_tokens` as None and means the rest of the context.
 */
function completionMaxTokens(maxTokens: number | null | undefined): number | undefined {
  if (maxTokens === undefined) return 16;
  return maxTokens ?? undefined;
}

function promptIdsOf(ctx: EngineContext, prompt: z.infer<typeof CompletionRequest>["prompt"]): number[] {
  const single = Array.isArray(prompt) && prompt.length === 1 && typeof prompt[0] !== "number" ? prompt[0]! : prompt;
  if (typeof single === "string") return ctx.model.encode(single);
  const ids = single as number[];
  const bad = ids.find((id) => id >= ctx.model.tokenizer.vocabSize);
  if (bad !== undefined) throw new EngineError("bad_request", `Token id ${bad} is out of vocabulary`, "prompt");
  if (ids.length === 0) throw new EngineError("bad_request", "The prompt cannot be empty", "prompt");
  return ids;
}

function legacyLogprobs(ctx: EngineContext, g: Generation, from: number, to: number, offset0: number) {
  const tokens: string[] = [];
  const textOffset: number[] = [];
  let offset = offset0;
  for (let i = from; i < to; i++) {
    const token = ctx.model.tokenText(g.outputIds[i]!);
    tokens.push(token);
    textOffset.push(offset);
    offset += token.length;
  }
  return {
    text_offset: textOffset,
    token_logprobs: g.logprobs.slice(from, to),
    tokens,
    top_logprobs: g.top.slice(from, to).map((cands) => Object.fromEntries(cands.map((c) => [ctx.model.tokenText(c.id), c.logprob]))),
  };
}

export async function vllmCompletion(ctx: EngineContext, body: unknown, signal: AbortSignal): Promise<Response> {
  const request = parseBody(CompletionRequest, body);
  checkModel(ctx, request.model);
  if ((request.n ?? 1) !== 1) throw new EngineError("bad_request", "Only n=1 is supported by the mock engine.", "n");
  const promptIds = promptIdsOf(ctx, request.prompt);
  const stop = stopList(request.stop);
  await ctx.gate.admit(signal);
  const k = request.logprobs ?? undefined;
  const g = ctx.model.generate({
    promptIds,
    maxTokens: completionMaxTokens(request.max_tokens),
    requestSeed: request.seed ?? undefined,
    topLogprobs: k ?? 0,
    stop,
    keepStopString: request.include_stop_str_in_output === true,
  });
  const id = `cmpl-${randomHex()}`;
  const created = nowSeconds();
  const model = ctx.options.model;
  const wantIds = request.return_token_ids === true;
  const usage = {
    prompt_tokens: promptIds.length,
    total_tokens: promptIds.length + g.outputIds.length,
    completion_tokens: g.outputIds.length,
    prompt_tokens_details: null,
  };

  if (request.stream) {
    return sseResponse(signal, async (send) => {
      await sleep(ctx.options.ttftMs);
      let emitted = 0;
      for (let i = 0; i < g.outputIds.length; i++) {
        await sleep(ctx.options.msPerToken);
        const last = i === g.outputIds.length - 1;
        let prefix = ctx.model.tokenizer.decode(g.outputIds.slice(0, i + 1), { skipSpecialTokens: true });
        if (!last) prefix = prefix.replace(/\uFFFD+$/, "");
        prefix = prefix.slice(0, g.text.length); // a stop string's trim
        const text = prefix.slice(emitted);
        emitted = Math.max(emitted, prefix.length);
        const choice = {
          index: 0,
          text,
          logprobs: k !== undefined ? legacyLogprobs(ctx, g, i, i + 1, emitted - text.length) : null,
          finish_reason: last ? g.finishReason : null,
          stop_reason: last ? (g.stopString ?? null) : null,
          ...(wantIds ? { token_ids: [g.outputIds[i]], ...(i === 0 ? { prompt_token_ids: promptIds } : {}) } : {}),
        };
        send(JSON.stringify({ id, object: "text_completion", created, model, choices: [choice] }));
      }
      if (request.stream_options?.include_usage) send(JSON.stringify({ id, object: "text_completion", created, model, choices: [], usage }));
      send("[DONE]");
    });
  }

  await sleep(ctx.options.ttftMs + ctx.options.msPerToken * g.outputIds.length);
  return Response.json({
    id,
    object: "text_completion",
    created,
    model,
    choices: [
      {
        index: 0,
        text: g.text,
        logprobs: k !== undefined ? legacyLogprobs(ctx, g, 0, g.outputIds.length, 0) : null,
        finish_reason: g.finishReason,
        stop_reason: g.stopString ?? null,
        prompt_logprobs: null,
        token_ids: wantIds ? g.outputIds : null,
        prompt_token_ids: wantIds ? promptIds : null,
      },
    ],
    service_tier: null,
    system_fingerprint: null,
    usage,
    kv_transfer_params: null,
  });
}
