// Why: SGLang's native POST /generate (what SGLang-based RL stacks call): `text` or `input_ids`,
// `sampling_params`, `return_logprob`; answers `{text, output_ids, meta_info}` where meta_info
// carries prompt/completion token counts, a `finish_reason` object and, with logprobs,
// `output_token_logprobs` as [logprob, token_id, text|null] tuples.
import { z } from "zod";
import { randomHex, sseResponse, type EngineContext } from "./context.ts";
import { EngineError } from "./engine-error.ts";
import { sleep } from "./faults.ts";
import type { Generation } from "./model.ts";
import { checkModel, parseBody } from "./request.ts";
import { stopList } from "./stop-strings.ts";

const GenerateRequest = z
  .object({
    model: z.string().optional(),
    text: z.string().optional(),
    input_ids: z.array(z.number().int().min(0)).optional(),
    sampling_params: z
      .object({
        max_new_tokens: z.number().int().nullable().optional(),
        sampling_seed: z.number().int().nullable().optional(),
        stop: z
          .union([z.string(), z.array(z.string())])
          .nullable()
          .optional(),
        no_stop_trim: z.boolean().optional(),
      })
      .passthrough()
      .optional(),
    return_logprob: z.boolean().optional(),
    top_logprobs_num: z.number().int().min(0).optional(),
    logprob_start_len: z.number().int().optional(),
    return_text_in_logprobs: z.boolean().optional(),
    stream: z.boolean().optional(),
    rid: z.string().optional(),
  })
  .passthrough();

export interface MetaInfoOptions {
  rid: string;
  promptIds: number[];
  returnLogprob: boolean;
  topLogprobsNum: number;
  textInLogprobs: boolean;
  startedAt: number;
}

type LogprobTuple = [number | null, number, string | null];

/** SGLang's meta_info for a finished generation. */
export function sglangMetaInfo(ctx: EngineContext, g: Generation, o: MetaInfoOptions): Record<string, unknown> {
  const tuple = (logprob: number | null, id: number): LogprobTuple => [logprob, id, o.textInLogprobs ? ctx.model.tokenText(id) : null];
  const meta: Record<string, unknown> = {
    id: o.rid,
    finish_reason:
      g.finishReason === "stop" ? { type: "stop", matched: g.stopString ?? ctx.model.tokenizer.eosTokenId } : { type: "length", length: g.outputIds.length },
    prompt_tokens: o.promptIds.length,
    completion_tokens: g.outputIds.length,
    cached_tokens: 0,
    weight_version: "default",
    e2e_latency: (performance.now() - o.startedAt) / 1000,
  };
  if (o.returnLogprob) {
    // Default logprob_start_len (-1) starts at the last prompt token, whose logprob is null.
    meta.input_token_logprobs = [tuple(null, o.promptIds[o.promptIds.length - 1]!)];
    meta.output_token_logprobs = g.outputIds.map((id, i) => tuple(g.logprobs[i]!, id));
    if (o.topLogprobsNum > 0) {
      meta.input_top_logprobs = [null];
      meta.output_top_logprobs = g.top.map((cands) => cands.map((c) => tuple(c.logprob, c.id)));
    }
  }
  return meta;
}

export async function sglangGenerate(ctx: EngineContext, body: unknown, signal: AbortSignal): Promise<Response> {
  const startedAt = performance.now();
  const request = parseBody(GenerateRequest, body);
  checkModel(ctx, request.model);
  if ((request.text === undefined) === (request.input_ids === undefined)) {
    throw new EngineError("bad_request", "Either text or input_ids should be provided.");
  }
  const promptIds = request.input_ids ?? ctx.model.encode(request.text!);
  if (promptIds.length === 0) throw new EngineError("bad_request", "The input is empty.");
  const sp = request.sampling_params ?? {};
  const stop = stopList(sp.stop);
  await ctx.gate.admit(signal);
  const topLogprobsNum = request.top_logprobs_num ?? 0;
  // SGLang's SamplingParams default max_new_tokens is 128.
  const g = ctx.model.generate({
    promptIds,
    maxTokens: sp.max_new_tokens ?? 128,
    requestSeed: sp.sampling_seed ?? undefined,
    topLogprobs: request.return_logprob ? topLogprobsNum : 0,
    stop,
    keepStopString: sp.no_stop_trim === true,
  });
  const meta: MetaInfoOptions = {
    rid: request.rid ?? randomHex(),
    promptIds,
    returnLogprob: request.return_logprob === true,
    topLogprobsNum,
    textInLogprobs: request.return_text_in_logprobs === true,
    startedAt,
  };

  if (request.stream) {
    return sseResponse(signal, async (send) => {
      await sleep(ctx.options.ttftMs);
      for (let n = 1; n <= g.outputIds.length; n++) {
        await sleep(ctx.options.msPerToken);
        const partial: Generation = {
          ...g,
          outputIds: g.outputIds.slice(0, n),
          logprobs: g.logprobs.slice(0, n),
          top: g.top.slice(0, n),
          text: ctx.model.tokenizer.decode(g.outputIds.slice(0, n), { skipSpecialTokens: true }).slice(0, g.text.length),
        };
        const metaInfo = sglangMetaInfo(ctx, partial, meta);
        if (n < g.outputIds.length) metaInfo.finish_reason = null;
        send(JSON.stringify({ text: partial.text, output_ids: partial.outputIds, meta_info: metaInfo }));
      }
      send("[DONE]");
    });
  }
  await sleep(ctx.options.ttftMs + ctx.options.msPerToken * g.outputIds.length);
  return Response.json({ text: g.text, output_ids: g.outputIds, meta_info: sglangMetaInfo(ctx, g, meta) });
}
