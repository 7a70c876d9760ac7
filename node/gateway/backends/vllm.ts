// Why: vLLM's chat endpoint renders the model's own template and, asked for it, returns the exact
// prompt ids, sampled ids and per-token logprobs, so one non-streaming call yields both the
// client's answer and the training tokens.
//
// vLLM facts relied on (vllm-project/vllm, vllm/entrypoints/openai/chat_completion/protocol.py and
// serving.py, read 2025): request fields `return_token_ids`, `logprobs`, `top_logprobs`, `top_k`,
// `chat_template_kwargs`, `skip_special_tokens` (default true: kept — the sampled ids are returned
// verbatim whatever the detokenizer drops, and the reasoning/tool parsers expect the default);
// response: top-level `prompt_token_ids`, `choices[0].token_ids` (= output.token_ids, including
// the EOS token when generation stopped on it), `choices[0].logprobs.content[]` built by
// `_create_chat_logprobs`, which iterates over the same `token_ids` — one entry per sampled id,
// EOS included, logprob clamped at -9999.0. `top_logprobs: 0` asks SamplingParams.logprobs=0:
// the sampled token's logprob only. `choices[0].stop_reason` is the matched stop string, a stop
// token id (stop_token_ids), or null (EOS, length) — a string becomes the pivot's stopSequence.
import { z } from "zod";
import { LogprobEntries, PromptTokenIds, TokenIds } from "./wire-tokens.ts";
import type { EngineCall, EngineResult, TokenCapture } from "./backend.ts";
import type { EngineClient } from "./engine-client.ts";
import { ChatEngineBackend } from "./chat-engine-backend.ts";
import { callNotes, usageOf } from "./capture.ts";
import { engineChatExtras, openAiChatBody, pivotFromChatMessage, WireChatChoice, wireChatResponse } from "./openai-chat.ts";

const VllmChatResponse = wireChatResponse(
  WireChatChoice.extend({
    stop_reason: z.union([z.string(), z.number()]).nullable().optional(),
    token_ids: TokenIds.nullable().optional(),
    logprobs: z.object({ content: LogprobEntries.nullable().optional() }).nullable().optional(),
  }),
).extend({ prompt_token_ids: PromptTokenIds.nullable().optional() });
type VllmChatResponse = z.infer<typeof VllmChatResponse>;

export class VllmBackend extends ChatEngineBackend {
  readonly name = "vllm";

  constructor(
    client: EngineClient,
    private readonly servedModel?: string,
  ) {
    super(client, (answer) => answer);
  }

  async complete(call: EngineCall): Promise<EngineResult> {
    const body: Record<string, unknown> = {
      ...openAiChatBody(call.request, { model: this.servedModel, reasoningField: "reasoning_and_content" }),
      ...engineChatExtras(call.request),
      return_token_ids: true,
      logprobs: true,
      top_logprobs: 0,
    };
    const { messages, ...rest } = body;
    const reply = await this.client.request({
      sessionId: call.sessionId,
      signal: call.signal,
      path: "/v1/chat/completions",
      json: () => this.bodyJson.serialize(call.sessionId, call.request.messages, messages as unknown[], rest),
      parse: (body) => this.answerJson.parse(call.sessionId, body),
      schema: VllmChatResponse,
    });
    const capture = vllmTokens(reply.data);
    const choice = reply.data.choices[0]!;
    const response = pivotFromChatMessage({
      id: reply.data.id,
      model: call.request.model,
      message: choice.message,
      finishReason: choice.finish_reason,
      matchedStop: choice.stop_reason,
      usage: usageOf(capture, reply.data.usage),
    });
    const notes = callNotes(reply.attempts, capture);
    return { response, tokens: "problem" in capture ? null : capture, engineUrl: reply.engineUrl, ...(notes && { notes }) };
  }
}

/**
 * Token capture from a vLLM chat answer. The logprob list must pair one-to-one with the sampled
 * ids; when it does not (or the ids are missing: a vLLM without `return_token_ids`), the client
 * still gets its answer and the call is recorded text-only with the problem in its notes.
 */
export function vllmTokens(data: VllmChatResponse): TokenCapture | { problem: string } {
  const choice = data.choices[0]!;
  const promptIds = data.prompt_token_ids;
  const outputIds = choice.token_ids;
  const logprobs = choice.logprobs?.content?.map((c) => c.logprob);
  if (!promptIds || !outputIds || !logprobs) {
    return { problem: "engine answer lacks prompt_token_ids, token_ids or logprobs (is return_token_ids supported?)" };
  }
  if (logprobs.length !== outputIds.length) {
    return { problem: `engine returned ${logprobs.length} logprobs for ${outputIds.length} sampled ids` };
  }
  return { promptIds, outputIds, logprobs };
}
