// Why: the tito backend sends prompt token ids and needs sampled ids + logprobs back; vLLM's
// `/v1/completions` and SGLang's `/generate` do that with different field names, so each gets a
// small adapter with the same shape.
//
// vLLM (vllm-project/vllm vllm/entrypoints/openai/completion/protocol.py): `prompt` may be a list
// of token ids; `return_token_ids` adds `choices[0].prompt_token_ids` and `choices[0].token_ids`;
// `logprobs: N` fills `choices[0].logprobs.token_logprobs` (one per sampled id; N counts extra
// top alternatives — 0 means the sampled token only); `max_tokens` defaults to 16 there, so an
// unset limit is sent as null (vLLM then allows the rest of the context); `choices[0].stop_reason`
// is the matched stop string (or a stop token id, or null).
// SGLang (sgl-project/sglang docs basic_usage/sampling_params.md, srt/managers/io_struct.py
// GenerateReqInput, tokenizer_manager.py): `/generate` takes `input_ids`, `sampling_params`
// {max_new_tokens (default 128), temperature, top_p, top_k, stop, sampling_seed},
// `return_logprob`; answers `{text, output_ids, meta_info:{id, finish_reason:{type, matched?},
// output_token_logprobs:[[logprob, id, text|null], …]}}`.
import { z } from "zod";
import { TokenIds } from "./wire-tokens.ts";
import type { PivotSampling } from "../pivot.ts";
import type { CaptureOutcome } from "./capture.ts";
import type { EngineClient } from "./engine-client.ts";
import { SglangMetaInfo } from "./sglang.ts";

export interface TokenCompletion {
  id: string | undefined;
  /** Sampled text as the engine detokenized it (special tokens skipped). */
  text: string;
  finishReason: string | undefined;
  /** The engine's words about how generation ended, when it gives any (SGLang: why it aborted). */
  finishMessage?: string;
  /** What ended generation as the engine reports it: a stop string, a token id, or nothing. */
  matchedStop: string | number | undefined;
  capture: CaptureOutcome;
  engineUrl: string;
  attempts: number;
}

export interface TokenCompletionCall {
  sessionId: string;
  signal: AbortSignal;
  model: string;
  promptIds: number[];
  sampling: PivotSampling;
  /** SGLang only (its default is 128): limit when the request sets none (context length − prompt length). */
  defaultMaxTokens: number | undefined;
}

export type TokenEngine = (client: EngineClient, call: TokenCompletionCall) => Promise<TokenCompletion>;

const VllmCompletionResponse = z.object({
  id: z.string().optional(),
  choices: z
    .array(
      z.object({
        text: z.string(),
        finish_reason: z.string().nullable().optional(),
        stop_reason: z.union([z.string(), z.number()]).nullable().optional(),
        token_ids: TokenIds.nullable().optional(),
        prompt_token_ids: TokenIds.nullable().optional(),
        logprobs: z
          .object({ token_logprobs: z.array(z.number().nullable()) })
          .nullable()
          .optional(),
      }),
    )
    .min(1),
});

export const vllmCompletions: TokenEngine = async (client, call) => {
  const s = call.sampling;
  const body: Record<string, unknown> = {
    model: call.model,
    prompt: call.promptIds,
    max_tokens: s.max_tokens ?? null,
    return_token_ids: true,
    // 1 rather than 0: the sampled token's logprob either way; OpenAI-style servers that read
    // `logprobs` as a truthy flag would drop 0.
    logprobs: 1,
    stream: false,
  };
  if (s.temperature !== undefined) body.temperature = s.temperature;
  if (s.top_p !== undefined) body.top_p = s.top_p;
  if (s.top_k !== undefined) body.top_k = s.top_k;
  if (s.stop !== undefined && s.stop.length > 0) body.stop = s.stop;
  if (s.seed !== undefined) body.seed = s.seed;
  const reply = await client.request({ sessionId: call.sessionId, signal: call.signal, path: "/v1/completions", body, schema: VllmCompletionResponse });
  const choice = reply.data.choices[0]!;
  return {
    id: reply.data.id,
    text: choice.text,
    finishReason: choice.finish_reason ?? undefined,
    matchedStop: choice.stop_reason ?? undefined,
    capture: pairIdsWithLogprobs(choice.prompt_token_ids ?? call.promptIds, choice.token_ids, choice.logprobs?.token_logprobs),
    engineUrl: reply.engineUrl,
    attempts: reply.attempts,
  };
};

const SglangGenerateResponse = z.object({
  text: z.string(),
  output_ids: TokenIds.optional(),
  meta_info: SglangMetaInfo.and(
    z.object({
      id: z.string().optional(),
      finish_reason: z
        .object({ type: z.string(), matched: z.union([z.string(), z.number()]).nullable().optional(), message: z.string().nullable().optional() })
        .passthrough()
        .nullable()
        .optional(),
    }),
  ),
});

export const sglangGenerate: TokenEngine = async (client, call) => {
  const s = call.sampling;
  const samplingParams: Record<string, unknown> = {};
  const maxNewTokens = s.max_tokens ?? call.defaultMaxTokens;
  if (maxNewTokens !== undefined) samplingParams.max_new_tokens = maxNewTokens;
  if (s.temperature !== undefined) samplingParams.temperature = s.temperature;
  if (s.top_p !== undefined) samplingParams.top_p = s.top_p;
  if (s.top_k !== undefined) samplingParams.top_k = s.top_k;
  if (s.stop !== undefined && s.stop.length > 0) samplingParams.stop = s.stop;
  if (s.seed !== undefined) samplingParams.sampling_seed = s.seed;
  const body = { input_ids: call.promptIds, sampling_params: samplingParams, return_logprob: true, stream: false };
  const reply = await client.request({ sessionId: call.sessionId, signal: call.signal, path: "/generate", body, schema: SglangGenerateResponse });
  const meta = reply.data.meta_info;
  const pairs = meta.output_token_logprobs;
  const outputIds = reply.data.output_ids ?? pairs?.map((p) => p[1]);
  return {
    id: meta.id,
    text: reply.data.text,
    finishReason: meta.finish_reason?.type,
    ...(meta.finish_reason?.message && { finishMessage: meta.finish_reason.message }),
    matchedStop: meta.finish_reason?.matched ?? undefined,
    capture: pairIdsWithLogprobs(
      call.promptIds,
      outputIds,
      pairs?.map((p) => p[0]),
    ),
    engineUrl: reply.engineUrl,
    attempts: reply.attempts,
  };
};

/** One logprob per sampled id, or the reason the capture is unusable. */
function pairIdsWithLogprobs(promptIds: number[], outputIds: number[] | null | undefined, logprobs: (number | null)[] | null | undefined): CaptureOutcome {
  if (!outputIds || !logprobs) return { problem: "engine answer lacks sampled token ids or logprobs" };
  if (logprobs.length !== outputIds.length) {
    return { problem: `engine returned ${logprobs.length} logprobs for ${outputIds.length} sampled ids` };
  }
  if (logprobs.some((l) => l === null)) return { problem: "engine returned a null logprob for a sampled token" };
  return { promptIds, outputIds, logprobs: logprobs as number[] };
}
