import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getChatTemplate } from "../tokenizer/chat-template.ts";
import { startMockEngine, type RunningMockEngine } from "./server.ts";

const BASH_TOOL = {
  type: "function",
  function: {
    name: "bash",
    description: "Run a shell command",
    parameters: { type: "object", properties: { command: { type: "string" }, description: { type: "string" } }, required: ["command", "description"] },
  },
};

let engine: RunningMockEngine;
const template = getChatTemplate();

beforeAll(async () => {
  engine = await startMockEngine({ port: 0, maxModelLen: 4096, seed: 7 });
});
afterAll(async () => {
  await engine.stop();
});

async function post(path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${engine.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

const firstTurn = [
  { role: "system", content: "You are a coding agent." },
  { role: "user", content: "Create out.txt with hello" },
];

describe("vLLM chat completions", () => {
  test("prompt_token_ids equal /tokenize and our tokenizer(render); token_ids decode to the parsed output", async () => {
    const body = { model: "Qwen/Qwen3-8B", messages: firstTurn, tools: [BASH_TOOL], return_token_ids: true, logprobs: true, top_logprobs: 3 };
    const { status, json } = await post("/v1/chat/completions", body);
    expect(status).toBe(200);
    const tokenized = await post("/tokenize", { model: "Qwen/Qwen3-8B", messages: firstTurn, tools: [BASH_TOOL] });
    expect(json.prompt_token_ids).toEqual(tokenized.json.tokens);
    const rendered = template.render(firstTurn, { tools: [BASH_TOOL as never] });
    expect(json.prompt_token_ids).toEqual(template.tokenizer.encode(rendered));
    expect(json.usage.prompt_tokens).toBe(json.prompt_token_ids.length);

    const choice = json.choices[0];
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.token_ids.at(-1)).toBe(template.tokenizer.eosTokenId);
    expect(choice.token_ids.length).toBe(json.usage.completion_tokens);
    const call = choice.message.tool_calls[0];
    expect(call.function.name).toBe("bash");
    expect(JSON.parse(call.function.arguments)).toEqual({ command: "echo hello > out.txt", description: "Run: echo hello > out.txt" });
    const text = (await post("/detokenize", { tokens: choice.token_ids })).json.prompt;
    expect(text).toBe(`<think>\n\n</think>\n\n<tool_call>\n{"name": "bash", "arguments": ${call.function.arguments}}\n</tool_call><|im_end|>`);

    const lp = choice.logprobs.content;
    expect(lp.length).toBe(choice.token_ids.length);
    for (const entry of lp) {
      expect(entry.logprob).toBeLessThan(0);
      expect(entry.top_logprobs.length).toBe(3);
      expect(entry.top_logprobs[0].token).toBe(entry.token);
    }
  });

  test("logprobs are deterministic per engine seed + request seed", async () => {
    const body = { messages: firstTurn, logprobs: true, seed: 3 };
    const a = (await post("/v1/chat/completions", body)).json.choices[0].logprobs.content.map((c: any) => c.logprob);
    const b = (await post("/v1/chat/completions", body)).json.choices[0].logprobs.content.map((c: any) => c.logprob);
    const c = (await post("/v1/chat/completions", { ...body, seed: 4 })).json.choices[0].logprobs.content.map((x: any) => x.logprob);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  test("second turn answers the final text; thinking off pre-fills the empty think block", async () => {
    const messages = [
      ...firstTurn,
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: '{"command": "echo hello > out.txt"}' } }],
      },
      { role: "tool", tool_call_id: "c1", content: "" },
    ];
    const { json } = await post("/v1/chat/completions", {
      messages,
      tools: [BASH_TOOL],
      return_token_ids: true,
      chat_template_kwargs: { enable_thinking: false },
    });
    const choice = json.choices[0];
    expect(choice.finish_reason).toBe("stop");
    expect(choice.message.content).toBe("Done.");
    expect(choice.message.reasoning).toBeNull();
    expect(choice.message.tool_calls).toBeUndefined();
    const promptText = template.tokenizer.decode(json.prompt_token_ids);
    expect(promptText.endsWith("<|im_start|>assistant\n<think>\n\n</think>\n\n")).toBe(true);
  });

  test("script steps with think: reasoning and content are split like vLLM", async () => {
    const scripted = await startMockEngine({ port: 0, script: { steps: [{ think: "Plan it.", text: "Hello!" }] } });
    try {
      const res = await fetch(`${scripted.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
      });
      const message = ((await res.json()) as any).choices[0].message;
      expect(message.reasoning_content).toBe("\nPlan it.\n");
      expect(message.content).toBe("\n\nHello!");
    } finally {
      await scripted.stop();
    }
  });

  test("max_tokens truncates with finish_reason length", async () => {
    const { json } = await post("/v1/chat/completions", { messages: firstTurn, tools: [BASH_TOOL], max_tokens: 5, return_token_ids: true });
    expect(json.choices[0].finish_reason).toBe("length");
    expect(json.choices[0].token_ids.length).toBe(5);
    expect(json.usage.completion_tokens).toBe(5);
  });

  test("context overflow → 400 with vLLM's message and error shape", async () => {
    const long = [{ role: "user", content: "word ".repeat(5000) }];
    const tooLong = await post("/v1/chat/completions", { messages: long });
    expect(tooLong.status).toBe(400);
    expect(tooLong.json.error.type).toBe("BadRequestError");
    expect(tooLong.json.error.code).toBe(400);
    expect(tooLong.json.error.message).toMatch(/^This model's maximum context length is 4096 tokens\. However, your request has \d+ input tokens\./);

    const tooMuch = await post("/v1/chat/completions", { messages: firstTurn, max_tokens: 4090 });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.json.error.message).toMatch(
      /^This model's maximum context length is 4096 tokens\. However, you requested \d+ tokens \(\d+ in the messages, 4090 in the completion\)\./,
    );
  });

  test("unknown model → 404 NotFoundError; malformed body → 400", async () => {
    const missing = await post("/v1/chat/completions", { model: "nope", messages: firstTurn });
    expect(missing.status).toBe(404);
    expect(missing.json.error).toEqual({ message: "The model `nope` does not exist.", type: "NotFoundError", param: "model", code: 404 });
    const bad = await post("/v1/chat/completions", { messages: "hi" });
    expect(bad.status).toBe(400);
    expect(bad.json.error.type).toBe("BadRequestError");
  });

  test("streaming: prompt ids on the first chunk, token ids per chunk, usage chunk, [DONE]", async () => {
    const res = await fetch(`${engine.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: firstTurn, tools: [BASH_TOOL], stream: true, return_token_ids: true, stream_options: { include_usage: true } }),
    });
    const events = (await res.text())
      .split("\n\n")
      .filter((e) => e.startsWith("data: "))
      .map((e) => e.slice(6));
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    const nonStream = (await post("/v1/chat/completions", { messages: firstTurn, tools: [BASH_TOOL], return_token_ids: true })).json;
    expect(chunks[0].prompt_token_ids).toEqual(nonStream.prompt_token_ids);
    const streamedIds = chunks.flatMap((c) => c.choices[0]?.token_ids ?? []);
    expect(streamedIds).toEqual(nonStream.choices[0].token_ids);
    const toolDeltas = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(toolDeltas.map((t: any) => t.function.arguments)).toEqual([nonStream.choices[0].message.tool_calls[0].function.arguments]);
    const finishChunk = chunks.find((c) => c.choices[0]?.finish_reason);
    expect(finishChunk.choices[0].finish_reason).toBe("tool_calls");
    expect(chunks.at(-1).usage.completion_tokens).toBe(streamedIds.length);
  });
});

describe("vLLM completions, tokenize, models, health", () => {
  test("/v1/completions with token ids continues the rendered chat (tito path)", async () => {
    const promptIds = template.renderIds(firstTurn, { tools: [BASH_TOOL as never] });
    const { status, json } = await post("/v1/completions", { prompt: promptIds, max_tokens: 200, return_token_ids: true, logprobs: 1 });
    expect(status).toBe(200);
    const choice = json.choices[0];
    expect(choice.prompt_token_ids).toEqual(promptIds);
    expect(choice.finish_reason).toBe("stop");
    expect(choice.text).toContain('<tool_call>\n{"name": "bash"');
    expect(template.tokenizer.decode(choice.token_ids, { skipSpecialTokens: true })).toBe(choice.text);
    expect(choice.logprobs.tokens.length).toBe(choice.token_ids.length);
  });

  test("/v1/completions: absent max_tokens is 16, an explicit null is the rest of the context (vLLM get_max_tokens)", async () => {
    const promptIds = template.renderIds(firstTurn, { tools: [BASH_TOOL as never] });
    const absent = (await post("/v1/completions", { prompt: promptIds, return_token_ids: true })).json.choices[0];
    expect(absent.token_ids).toHaveLength(16);
    expect(absent.finish_reason).toBe("length");
    const unlimited = (await post("/v1/completions", { prompt: promptIds, max_tokens: null, return_token_ids: true })).json.choices[0];
    expect(unlimited.token_ids.length).toBeGreaterThan(16);
    expect(unlimited.token_ids.at(-1)).toBe(template.tokenizer.eosTokenId);
    expect(unlimited.finish_reason).toBe("stop");
    expect(unlimited.stop_reason).toBeNull();
    expect(unlimited.token_ids.slice(0, 16)).toEqual(absent.token_ids);
  });

  test("/tokenize text and /detokenize round-trip; models and health", async () => {
    const tok = await post("/tokenize", { prompt: "hello <|im_end|>", return_token_strs: true });
    expect(tok.json.tokens).toEqual(template.tokenizer.encode("hello <|im_end|>"));
    expect(tok.json.token_strs).toEqual(["hello", "Ġ", "<|im_end|>"]);
    expect(tok.json.max_model_len).toBe(4096);
    expect((await post("/detokenize", { tokens: tok.json.tokens })).json.prompt).toBe("hello <|im_end|>");
    const models = (await (await fetch(`${engine.url}/v1/models`)).json()) as any;
    expect(models.data[0].id).toBe("Qwen/Qwen3-8B");
    expect(models.data[0].max_model_len).toBe(4096);
    expect((await fetch(`${engine.url}/health`)).status).toBe(200);
  });
});
