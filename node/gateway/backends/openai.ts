// Why: offline data generation can use any OpenAI-compatible chat API (hosted or self-served)
// that cannot return token ids; such calls are recorded as text only and say so in their notes.
import type { EngineCall, EngineResult } from "./backend.ts";
import { EngineBackend } from "./engine-backend.ts";
import type { EngineClient } from "./engine-client.ts";
import { openAiChatBody, pivotFromChatMessage, WireChatResponse } from "./openai-chat.ts";

export class OpenAiBackend extends EngineBackend {
  readonly name = "openai";

  constructor(
    client: EngineClient,
    private readonly options: { servedModel?: string; passReasoning: boolean },
  ) {
    super(client);
  }

  async complete(call: EngineCall): Promise<EngineResult> {
    const body = openAiChatBody(call.request, {
      model: this.options.servedModel,
      reasoningField: this.options.passReasoning ? "reasoning_content" : "omit",
    });
    const reply = await this.client.request({
      sessionId: call.sessionId,
      signal: call.signal,
      path: "/v1/chat/completions",
      body,
      schema: WireChatResponse,
    });
    const choice = reply.data.choices[0]!;
    const response = pivotFromChatMessage({
      id: reply.data.id,
      model: call.request.model,
      message: choice.message,
      finishReason: choice.finish_reason,
      usage: {
        prompt_tokens: reply.data.usage?.prompt_tokens ?? 0,
        completion_tokens: reply.data.usage?.completion_tokens ?? 0,
      },
    });
    return {
      response,
      tokens: null,
      engineUrl: reply.engineUrl,
      notes: { text_only: true, ...(reply.attempts > 1 && { attempts: reply.attempts }) },
    };
  }
}
