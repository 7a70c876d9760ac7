// SDK fidelity without a server: the official `openai` client, given a fetch that answers with
// what the Chat dialect renders, must read back exactly the pivot response (content, reasoning,
// tool call ids/names/arguments, usage) streaming and not, and raise its typed errors.
import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { PolarError } from "../../../../protocol/errors.ts";
import type { PivotRequest, PivotResponse } from "../../pivot.ts";
import { chatDialect } from "./index.ts";
import { clientAnswering, clientFailing } from "../../../../test/support/gateway/openai-sdk.ts";

const TOOL_TURN: PivotResponse = {
  id: "abc123",
  model: "qwen3-test",
  content: "I will run two commands.",
  reasoning: "The user wants a file; use the shell.",
  tool_calls: [
    { id: "call_1", name: "bash", arguments: '{"command":"echo hello > out.txt"}' },
    { id: "call_2", name: "read", arguments: '{"path":"out.txt"}' },
  ],
  finish_reason: "tool_calls",
  usage: { prompt_tokens: 120, completion_tokens: 40 },
};

const TOOL_ONLY: PivotResponse = {
  id: "def456",
  model: "qwen3-test",
  content: "",
  tool_calls: [{ id: "call_9", name: "run_shell_command", arguments: '{"command":"ls"}' }],
  finish_reason: "tool_calls",
  usage: { prompt_tokens: 10, completion_tokens: 5 },
};

const FINAL_TEXT: PivotResponse = {
  id: "ghi789",
  model: "qwen3-test",
  content: "Done. 完成 ✅",
  tool_calls: [],
  finish_reason: "stop",
  usage: { prompt_tokens: 200, completion_tokens: 3 },
};

const CASES = { TOOL_TURN, TOOL_ONLY, FINAL_TEXT };

const MESSAGES = [{ role: "user" as const, content: "make out.txt" }];

interface Accumulated {
  content: string;
  reasoning: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: string | null;
  usage: unknown;
  roles: string[];
}

type DeltaWithReasoning = OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta & { reasoning_content?: string };

async function accumulate(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>): Promise<Accumulated> {
  const out: Accumulated = { content: "", reasoning: "", toolCalls: [], finishReason: null, usage: null, roles: [] };
  for await (const chunk of stream) {
    if (chunk.usage) out.usage = chunk.usage;
    for (const choice of chunk.choices) {
      const delta: DeltaWithReasoning = choice.delta;
      if (delta.role) out.roles.push(delta.role);
      out.content += delta.content ?? "";
      out.reasoning += delta.reasoning_content ?? "";
      for (const call of delta.tool_calls ?? []) {
        const slot = (out.toolCalls[call.index] ??= { id: "", name: "", arguments: "" });
        slot.id += call.id ?? "";
        slot.name += call.function?.name ?? "";
        slot.arguments += call.function?.arguments ?? "";
      }
      if (choice.finish_reason) out.finishReason = choice.finish_reason;
    }
  }
  return out;
}

describe("chat dialect through the official openai SDK", () => {
  for (const [label, response] of Object.entries(CASES)) {
    test(`${label}: non-streaming create() returns the pivot response`, async () => {
      const completion = await clientAnswering(chatDialect, response).chat.completions.create({ model: "m", messages: MESSAGES });
      expect(completion.id).toBe(`chatcmpl-${response.id}`);
      expect(completion.object).toBe("chat.completion");
      const choice = completion.choices[0];
      expect(choice?.finish_reason).toBe(response.finish_reason);
      expect(choice?.message.content ?? "").toBe(response.content);
      const message = choice?.message as { reasoning_content?: string } | undefined;
      expect(message?.reasoning_content).toBe(response.reasoning);
      const calls = (choice?.message.tool_calls ?? []).map((call) => {
        if (call.type !== "function") throw new Error(`unexpected tool call type ${call.type}`);
        return { id: call.id, name: call.function.name, arguments: call.function.arguments };
      });
      expect(calls).toEqual(response.tool_calls);
      expect(completion.usage).toEqual({
        prompt_tokens: response.usage.prompt_tokens,
        completion_tokens: response.usage.completion_tokens,
        total_tokens: response.usage.prompt_tokens + response.usage.completion_tokens,
      });
    });

    test(`${label}: streamed chunks accumulate to the same response`, async () => {
      const stream = await clientAnswering(chatDialect, response).chat.completions.create({
        model: "m",
        messages: MESSAGES,
        stream: true,
        stream_options: { include_usage: true },
      });
      const got = await accumulate(stream);
      expect(got.roles).toEqual(["assistant"]);
      expect(got.content).toBe(response.content);
      expect(got.reasoning).toBe(response.reasoning ?? "");
      expect(got.toolCalls).toEqual(response.tool_calls);
      expect(got.finishReason).toBe(response.finish_reason);
      expect(got.usage).toEqual({
        prompt_tokens: response.usage.prompt_tokens,
        completion_tokens: response.usage.completion_tokens,
        total_tokens: response.usage.prompt_tokens + response.usage.completion_tokens,
      });
    });

    test(`${label}: the SDK's stream helper builds the same final completion`, async () => {
      const runner = clientAnswering(chatDialect, response).chat.completions.stream({ model: "m", messages: MESSAGES });
      const final = await runner.finalChatCompletion();
      const choice = final.choices[0];
      expect(choice?.message.content ?? "").toBe(response.content);
      expect(choice?.finish_reason).toBe(response.finish_reason);
      const calls = (choice?.message.tool_calls ?? []).map((call) => {
        if (call.type !== "function") throw new Error(`unexpected tool call type ${call.type}`);
        return { id: call.id, name: call.function.name, arguments: call.function.arguments };
      });
      expect(calls).toEqual(response.tool_calls);
    });
  }

  test("no usage chunk unless the client asked for it", async () => {
    const stream = await clientAnswering(chatDialect, FINAL_TEXT).chat.completions.create({ model: "m", messages: MESSAGES, stream: true });
    const got = await accumulate(stream);
    expect(got.usage).toBeNull();
    expect(got.content).toBe(FINAL_TEXT.content);
  });

  test("the SDK's own request bodies parse (tools, tool results, max_completion_tokens)", async () => {
    const seen: PivotRequest[] = [];
    await clientAnswering(chatDialect, FINAL_TEXT, seen).chat.completions.create({
      model: "m",
      max_completion_tokens: 99,
      messages: [
        { role: "developer", content: "be brief" },
        { role: "user", content: [{ type: "text", text: "go" }] },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "bash", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "call_1", content: [{ type: "text", text: "(no output)" }] },
      ],
      tools: [{ type: "function", function: { name: "bash", parameters: { type: "object", properties: {} } } }],
    });
    expect(seen).toEqual([
      {
        model: "m",
        messages: [
          { role: "system", content: "be brief" },
          { role: "user", content: "go" },
          { role: "assistant", content: "", tool_calls: [{ id: "call_1", name: "bash", arguments: "{}" }] },
          { role: "tool", content: "(no output)", tool_call_id: "call_1" },
        ],
        tools: [{ name: "bash", parameters: { type: "object", properties: {} } }],
        sampling: { max_tokens: 99 },
        stream: false,
        render_hints: { include_usage: false },
      },
    ]);
  });
});

describe("chat dialect errors through the official openai SDK", () => {
  test("context_length → BadRequestError 400 with code context_length_exceeded", async () => {
    const failure = clientFailing(chatDialect, new PolarError("context_length", "prompt has 50000 tokens, limit 40960"));
    const error = await failure.chat.completions.create({ model: "m", messages: MESSAGES }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const typed = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(typed.status).toBe(400);
    expect(typed.code).toBe("context_length_exceeded");
    expect(typed.param).toBe("messages");
    expect(typed.message).toMatch(/maximum context length/);
  });

  test("vLLM's own context message is passed through verbatim", async () => {
    const vllm = "This model's maximum context length is 40960 tokens. However, you requested 41000 tokens.";
    const { body } = chatDialect.renderError(new PolarError("context_length", vllm));
    expect(body).toEqual({
      error: { message: vllm, type: "invalid_request_error", param: "messages", code: "context_length_exceeded" },
    });
  });

  test("unauthorized → AuthenticationError 401 invalid_api_key", async () => {
    const error = await clientFailing(chatDialect, new PolarError("unauthorized", "unknown session key"))
      .chat.completions.create({ model: "m", messages: MESSAGES })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((error as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe("invalid_api_key");
  });

  test("engine_unavailable → InternalServerError (5xx, retried by clients)", async () => {
    const error = await clientFailing(chatDialect, new PolarError("engine_unavailable", "no engine reachable"))
      .chat.completions.create({ model: "m", messages: MESSAGES })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as InstanceType<typeof OpenAI.InternalServerError>).status).toBe(502);
  });

  test("a bad body names the bad field", () => {
    const attempt = () => chatDialect.parseRequest({ model: "m", messages: [{ role: "user", content: 5 }] });
    expect(attempt).toThrow(PolarError);
    expect(attempt).toThrow(/messages\.0\.content/);
  });

  test("a failure mid-stream raises an APIError carrying the code", async () => {
    const stream = await clientFailing(chatDialect, new PolarError("engine_timeout", "engine took too long"), true).chat.completions.create({
      model: "m",
      messages: MESSAGES,
      stream: true,
    });
    const error = await accumulate(stream).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe("timeout");
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain("engine took too long");
  });
});
