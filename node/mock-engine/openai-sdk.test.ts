import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startMockEngine, type RunningMockEngine } from "./server.ts";

let engine: RunningMockEngine;
let client: OpenAI;

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: "function",
    function: {
      name: "exec_command",
      description: "Runs a command",
      parameters: { type: "object", properties: { cmd: { type: "array", items: { type: "string" } }, workdir: { type: "string" } }, required: ["cmd"] },
    },
  },
];

beforeAll(async () => {
  engine = await startMockEngine({ port: 0, script: { steps: [{ think: "list first", shell: "ls -la" }, { text: "All good." }] } });
  client = new OpenAI({ baseURL: `${engine.url}/v1`, apiKey: "unused", maxRetries: 0 });
});
afterAll(async () => {
  await engine.stop();
});

describe("the official openai SDK as a client of the mock engine", () => {
  test("non-streaming two-turn tool loop", async () => {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "user", content: "What is here?" }];
    const first = await client.chat.completions.create({ model: "Qwen/Qwen3-8B", messages, tools });
    const turn1 = first.choices[0]!;
    expect(turn1.finish_reason).toBe("tool_calls");
    const call = turn1.message.tool_calls![0]!;
    expect(call.type).toBe("function");
    if (call.type !== "function") throw new Error("unreachable");
    expect(call.function.name).toBe("exec_command");
    expect(JSON.parse(call.function.arguments)).toEqual({ cmd: ["bash", "-lc", "ls -la"] });

    messages.push(turn1.message as OpenAI.Chat.Completions.ChatCompletionMessageParam, { role: "tool", tool_call_id: call.id, content: "out.txt" });
    const second = await client.chat.completions.create({ model: "Qwen/Qwen3-8B", messages, tools });
    expect(second.choices[0]!.finish_reason).toBe("stop");
    expect(second.choices[0]!.message.content).toBe("\n\nAll good.");
    expect(second.usage!.prompt_tokens).toBeGreaterThan(first.usage!.prompt_tokens);
  });

  test("streaming two-turn tool loop", async () => {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "user", content: "What is here?" }];
    const stream1 = await client.chat.completions.create({ model: "Qwen/Qwen3-8B", messages, tools, stream: true, stream_options: { include_usage: true } });
    const calls = new Map<number, { id: string; name: string; arguments: string }>();
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream1) {
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      for (const tc of choice.delta.tool_calls ?? []) {
        const acc = calls.get(tc.index) ?? { id: "", name: "", arguments: "" };
        acc.id ||= tc.id ?? "";
        acc.name += tc.function?.name ?? "";
        acc.arguments += tc.function?.arguments ?? "";
        calls.set(tc.index, acc);
      }
      finish = choice.finish_reason ?? finish;
    }
    expect(finish).toBe("tool_calls");
    expect(usage!.completion_tokens).toBeGreaterThan(0);
    const call = calls.get(0)!;
    expect(call.name).toBe("exec_command");
    expect(JSON.parse(call.arguments)).toEqual({ cmd: ["bash", "-lc", "ls -la"] });

    messages.push(
      { role: "assistant", content: null, tool_calls: [{ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }] },
      { role: "tool", tool_call_id: call.id, content: "out.txt" },
    );
    const stream2 = await client.chat.completions.create({ model: "Qwen/Qwen3-8B", messages, tools, stream: true });
    let content = "";
    let finish2: string | null = null;
    for await (const chunk of stream2) {
      content += chunk.choices[0]?.delta.content ?? "";
      finish2 = chunk.choices[0]?.finish_reason ?? finish2;
    }
    expect(finish2).toBe("stop");
    expect(content).toBe("\n\nAll good.");
  });

  test("an API error surfaces as the SDK's typed error with vLLM's message", async () => {
    const err = await client.chat.completions.create({ model: "other-model", messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).message).toContain("The model `other-model` does not exist.");
  });
});
