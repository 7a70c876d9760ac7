// Why: SGLang's OpenAI chat endpoint renders the template server-side and, with its token-id
// extras, returns the prompt ids and per-token (logprob, id) pairs of the sample.
//
// SGLang facts relied on (sgl-project/sglang, python/sglang/srt/entrypoints/openai/protocol.py and
// serving_chat.py `_build_chat_response`; srt/managers/tokenizer_manager.py
// `detokenize_logprob_tokens`): request flags `return_prompt_token_ids`, `return_meta_info`,
// `logprobs` (→ return_logprob), `top_k`, `chat_template_kwargs`, `separate_reasoning` (default
// true); response: `choices[0].prompt_token_ids`, `choices[0].meta_info` = the engine's meta_info
// whose `output_token_logprobs` is a list of `[logprob, token_id, token_text|null]`, one per
// sampled token — the sampled ids are its second column; `meta_info.weight_version`; reasoning in
// `message.reasoning_content`; `choices[0].matched_stop` = finish_reason["matched"]: the EOS /
// stop token id, the matched stop string, or None (tool calls parsed, length). These flags exist
// from sglang 0.5.13 on; an older server answers without them and the call is recorded text-only
// with the reason in its notes.
import { z } from "zod";
import type { TokenIdList } from "../../store/token-codec.ts";
import { PromptTokenIds, SglangTokenLogprobs, type SglangTokenLogprob } from "./wire-tokens.ts";
import type { EngineCall, EngineResult } from "./backend.ts";
import { callNotes, usageOf, type CaptureOutcome } from "./capture.ts";
import { ChatEngineBackend } from "./chat-engine-backend.ts";
import type { EngineClient } from "./engine-client.ts";
import { engineChatExtras, openAiChatBody, pivotFromChatMessage, WireChatChoice, wireChatResponse } from "./openai-chat.ts";
import type { RouterWorkerDiscovery } from "./sglang-router.ts";

export const SglangMetaInfo = z
  .object({
    output_token_logprobs: SglangTokenLogprobs.optional(),
    weight_version: z.union([z.string(), z.number()]).nullable().optional(),
  })
  .passthrough();

const SglangChatResponse = wireChatResponse(
  WireChatChoice.extend({
    matched_stop: z.union([z.string(), z.number()]).nullable().optional(),
    prompt_token_ids: PromptTokenIds.nullable().optional(),
    meta_info: SglangMetaInfo.nullable().optional(),
  }),
);

export class SglangBackend extends ChatEngineBackend {
  readonly name = "sglang";

  constructor(
    client: EngineClient,
    private readonly options: { servedModel?: string; discovery?: RouterWorkerDiscovery },
  ) {
    super(client, (answer) => (answer.choices as unknown[] | undefined)?.[0]);
  }

  async complete(call: EngineCall): Promise<EngineResult> {
    await this.options.discovery?.refreshIfStale();
    const body: Record<string, unknown> = {
      ...openAiChatBody(call.request, { model: this.options.servedModel, reasoningField: "reasoning_content" }),
      ...engineChatExtras(call.request),
      logprobs: true,
      return_prompt_token_ids: true,
      return_meta_info: true,
    };
    const { messages, ...rest } = body;
    const reply = await this.client.request({
      sessionId: call.sessionId,
      signal: call.signal,
      path: "/v1/chat/completions",
      json: () => this.bodyJson.serialize(call.sessionId, call.request.messages, messages as unknown[], rest),
      parse: (body) => this.answerJson.parse(call.sessionId, body),
      schema: SglangChatResponse,
    });
    const choice = reply.data.choices[0]!;
    const capture = sglangChatTokens(choice.prompt_token_ids, choice.meta_info?.output_token_logprobs);
    const response = pivotFromChatMessage({
      id: reply.data.id,
      model: call.request.model,
      message: choice.message,
      finishReason: choice.finish_reason,
      matchedStop: choice.matched_stop,
      usage: usageOf(capture, reply.data.usage),
    });
    const weightVersion = choice.meta_info?.weight_version;
    const notes = callNotes(reply.attempts, capture, weightVersion != null ? { weight_version: weightVersion } : undefined);
    return { response, tokens: "problem" in capture ? null : capture, engineUrl: reply.engineUrl, ...(notes && { notes }) };
  }

  override async listModels(): Promise<string[]> {
    await this.options.discovery?.refreshIfStale();
    return super.listModels();
  }
}

function sglangChatTokens(promptIds: TokenIdList | null | undefined, outputLogprobs: SglangTokenLogprob[] | undefined): CaptureOutcome {
  if (!promptIds || !outputLogprobs) {
    return { problem: "engine answer lacks prompt_token_ids or meta_info.output_token_logprobs (sglang < 0.5.13?)" };
  }
  return { promptIds, outputIds: outputLogprobs.map((t) => t[1]), logprobs: outputLogprobs.map((t) => t[0]) };
}
