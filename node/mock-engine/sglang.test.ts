import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getChatTemplate } from "../tokenizer/chat-template.ts";
import { startMockEngine, type RunningMockEngine } from "./server.ts";

let engine: RunningMockEngine;
const template = getChatTemplate();
const tools = [
  { type: "function", function: { name: "Bash", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } } },
];
const messages = [{ role: "user", content: "make out.txt" }];

beforeAll(async () => {
  engine = await startMockEngine({ port: 0, dialect: "sglang", maxModelLen: 2048 });
});
afterAll(async () => {
  await engine.stop();
});

async function post(path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${engine.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

describe("SGLang dialect", () => {
  test("/generate with input_ids: output_ids, meta_info counts, finish_reason object, logprob tuples", async () => {
    const inputIds = template.renderIds(messages, { tools: tools as never });
    const { status, json } = await post("/generate", {
      input_ids: inputIds,
      sampling_params: { max_new_tokens: 256, temperature: 1 },
      return_logprob: true,
      return_text_in_logprobs: true,
    });
    expect(status).toBe(200);
    expect(json.meta_info.prompt_tokens).toBe(inputIds.length);
    expect(json.meta_info.completion_tokens).toBe(json.output_ids.length);
    expect(json.output_ids.at(-1)).toBe(template.tokenizer.eosTokenId);
    expect(json.meta_info.finish_reason).toEqual({ type: "stop", matched: template.tokenizer.eosTokenId });
    expect(json.text).toBe(template.tokenizer.decode(json.output_ids, { skipSpecialTokens: true }));
    const tuples = json.meta_info.output_token_logprobs;
    expect(tuples.map((t: any[]) => t[1])).toEqual(json.output_ids);
    expect(tuples.every((t: any[]) => t[0] < 0 && typeof t[2] === "string")).toBe(true);
  });

  test("/generate with text and a small budget: finish_reason length", async () => {
    const { json } = await post("/generate", { text: template.render(messages), sampling_params: { max_new_tokens: 3 }, return_logprob: true });
    expect(json.meta_info.finish_reason).toEqual({ type: "length", length: 3 });
    expect(json.meta_info.output_token_logprobs.every((t: any[]) => t[2] === null)).toBe(true);
  });

  test("chat with return_prompt_token_ids + return_meta_info: prompt ids, sampled ids in meta_info, matched_stop None for tool calls", async () => {
    const { json } = await post("/v1/chat/completions", { messages, tools, logprobs: true, return_prompt_token_ids: true, return_meta_info: true });
    const choice = json.choices[0];
    expect(choice.prompt_token_ids).toEqual(
      template.renderIds(messages, { tools: [{ type: "function", function: { name: "Bash", description: null, parameters: tools[0]!.function.parameters } }] }),
    );
    const sampled = choice.meta_info.output_token_logprobs.map((t: any[]) => t[1]);
    expect(sampled.at(-1)).toBe(template.tokenizer.eosTokenId);
    expect(choice.meta_info.completion_tokens).toBe(sampled.length);
    // SGLang's _build_chat_response never fills choices[].token_ids.
    expect("token_ids" in choice).toBe(false);
    expect(choice.finish_reason).toBe("tool_calls");
    // _process_tool_calls: a "stop" that parsed tool calls becomes "tool_calls" with matched None.
    expect(choice.matched_stop).toBeNull();
    expect(choice.meta_info.finish_reason).toEqual({ type: "stop", matched: template.tokenizer.eosTokenId });
    expect(choice.message.tool_calls[0].function.name).toBe("Bash");
    expect(choice.message.reasoning_content).toBe("\n\n");
    expect(json.usage.prompt_tokens).toBe(choice.prompt_token_ids.length);
  });

  test("return_token_ids is accepted but returns no ids; prompt ids need return_prompt_token_ids; a text answer's matched_stop is the EOS id", async () => {
    const { status, json } = await post("/v1/chat/completions", { messages, return_token_ids: true });
    expect(status).toBe(200);
    const choice = json.choices[0];
    expect("token_ids" in choice).toBe(false);
    expect("prompt_token_ids" in choice).toBe(false);
    expect("meta_info" in choice).toBe(false);
    expect(choice.finish_reason).toBe("stop");
    expect(choice.matched_stop).toBe(template.tokenizer.eosTokenId);
  });

  test("streaming with return_token_ids is not refused (only prompt ids and meta_info are)", async () => {
    const res = await fetch(`${engine.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages, stream: true, return_token_ids: true }),
    });
    expect(res.status).toBe(200);
    const events = (await res.text()).split("\n\n").filter((e) => e.startsWith("data: "));
    expect(events.at(-1)).toBe("data: [DONE]");
  });

  test("token extensions are refused with streaming; errors use SGLang's flat shape", async () => {
    const { status, json } = await post("/v1/chat/completions", { messages, stream: true, return_prompt_token_ids: true });
    expect(status).toBe(400);
    expect(json.object).toBe("error");
    expect(json.message).toContain("return_prompt_token_ids is not supported with streaming");
    const meta = await post("/v1/chat/completions", { messages, stream: true, return_meta_info: true });
    expect(meta.status).toBe(400);
    expect(meta.json.message).toContain("return_meta_info is not supported with streaming");
  });

  test("context overflow messages", async () => {
    const long = await post("/generate", { text: "word ".repeat(3000) });
    expect(long.status).toBe(400);
    expect(long.json.error.message).toMatch(/^The input \(\d+ tokens\) is longer than the model's context length \(2048 tokens\)\.$/);
    const chat = await post("/v1/chat/completions", { messages, max_tokens: 2040 });
    expect(chat.status).toBe(400);
    expect(chat.json.message).toContain("Requested token count exceeds the model's maximum context length of 2048 tokens.");
  });
});
