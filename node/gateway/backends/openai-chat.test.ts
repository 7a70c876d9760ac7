import { describe, expect, test } from "bun:test";
import { PolarError } from "../../../protocol/errors.ts";
import type { PivotRequest } from "../pivot.ts";
import { engineChatExtras, finishReasonOf, openAiChatBody, pivotFromChatMessage, toOpenAiMessages } from "./openai-chat.ts";

const request: PivotRequest = {
  model: "qwen3",
  messages: [
    { role: "system", content: "be brief" },
    { role: "user", content: "make a file" },
    {
      role: "assistant",
      content: "",
      reasoning: "use bash",
      tool_calls: [{ id: "call_1", name: "bash", arguments: '{"command":"touch a"}' }],
    },
    { role: "tool", content: "ok", tool_call_id: "call_1", name: "bash" },
  ],
  tools: [{ name: "bash", description: "run", parameters: { type: "object", properties: { command: { type: "string" } } } }],
  tool_choice: { name: "bash" },
  sampling: { max_tokens: 64, temperature: 0.7, top_p: 0.9, top_k: 20, stop: ["END"], seed: 7 },
  thinking: false,
  stream: true,
};

describe("pivot → OpenAI chat", () => {
  test("messages keep reasoning, tool calls as JSON text and tool_call_id", () => {
    const [, , assistant, tool] = toOpenAiMessages(request.messages, "reasoning_and_content");
    expect(assistant).toEqual({
      role: "assistant",
      content: "",
      reasoning_content: "use bash",
      reasoning: "use bash",
      tool_calls: [{ id: "call_1", type: "function", function: { name: "bash", arguments: '{"command":"touch a"}' } }],
    });
    expect(tool).toEqual({ role: "tool", content: "ok", tool_call_id: "call_1", name: "bash" });
    expect(toOpenAiMessages(request.messages, "omit")[2]).not.toHaveProperty("reasoning_content");
  });

  test("body carries tools, named tool choice and sampling; never streams", () => {
    const body = openAiChatBody(request, { reasoningField: "omit", model: "served" });
    expect(body).toMatchObject({
      model: "served",
      stream: false,
      tool_choice: { type: "function", function: { name: "bash" } },
      max_tokens: 64,
      temperature: 0.7,
      top_p: 0.9,
      stop: ["END"],
      seed: 7,
    });
    expect(body.tools).toEqual([{ type: "function", function: { name: "bash", description: "run", parameters: request.tools[0]!.parameters } }]);
    expect(body).not.toHaveProperty("top_k");
    expect(engineChatExtras(request)).toEqual({ top_k: 20, chat_template_kwargs: { enable_thinking: false } });
    expect(engineChatExtras({ ...request, thinking: undefined, sampling: {} })).toEqual({});
  });

  test("answers map to the pivot: reasoning under either name, object arguments as JSON text", () => {
    const response = pivotFromChatMessage({
      id: "x",
      model: "qwen3",
      message: { content: null, reasoning_content: "hmm", tool_calls: [{ id: "c", function: { name: "bash", arguments: { command: "ls" } } }] },
      finishReason: "stop",
      usage: { prompt_tokens: 3, completion_tokens: 2 },
    });
    expect(response).toEqual({
      id: "x",
      model: "qwen3",
      content: "",
      reasoning: "hmm",
      tool_calls: [{ id: "c", name: "bash", arguments: '{"command":"ls"}' }],
      finish_reason: "tool_calls",
      usage: { prompt_tokens: 3, completion_tokens: 2 },
    });
    expect(finishReasonOf("length", true)).toBe("length");
  });

  test("an aborted generation is an engine_error (502), never a clean stop", () => {
    for (const hasToolCalls of [false, true]) {
      const err = (() => {
        try {
          return finishReasonOf("abort", hasToolCalls, "Abort before prefill");
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(PolarError);
      expect((err as PolarError).code).toBe("engine_error");
      expect((err as PolarError).status).toBe(502);
      expect((err as PolarError).message).toBe("engine aborted the generation before it finished (Abort before prefill)");
    }
  });
});
