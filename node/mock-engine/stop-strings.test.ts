import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getChatTemplate } from "../tokenizer/chat-template.ts";
import { startMockEngine, type RunningMockEngine } from "./server.ts";

const template = getChatTemplate();
const ANSWER = "Alpha beta. STOP gamma delta.";
const script = { steps: [{ text: ANSWER }] };
const messages = [{ role: "user", content: "Say something." }];
const noThinking = { chat_template_kwargs: { enable_thinking: false } };

let vllm: RunningMockEngine;
let sglang: RunningMockEngine;

beforeAll(async () => {
  vllm = await startMockEngine({ port: 0, script });
  sglang = await startMockEngine({ port: 0, script, dialect: "sglang" });
});
afterAll(async () => {
  await vllm.stop();
  await sglang.stop();
});

async function post(engine: RunningMockEngine, path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${engine.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

const decode = (ids: number[]) => template.tokenizer.decode(ids, { skipSpecialTokens: true });

describe("stop strings, vLLM dialect", () => {
  test("chat: output ends at the first stop string, excluded from the text, stop_reason names it", async () => {
    const { json } = await post(vllm, "/v1/chat/completions", {
      messages,
      stop: ["nothing-like-this", "STOP"],
      return_token_ids: true,
      logprobs: true,
      ...noThinking,
    });
    const choice = json.choices[0];
    expect(choice.message.content).toBe("Alpha beta. ");
    expect(choice.finish_reason).toBe("stop");
    expect(choice.stop_reason).toBe("STOP");
    // The token that completed the stop string was sampled and is returned; nothing after it, no EOS.
    const sampled = decode(choice.token_ids);
    expect(sampled).toContain("STOP");
    expect(sampled).not.toContain("delta");
    expect(choice.token_ids).not.toContain(template.tokenizer.eosTokenId);
    expect(choice.logprobs.content).toHaveLength(choice.token_ids.length);
  });

  test("chat: a single stop string, include_stop_str_in_output keeps it", async () => {
    const { json } = await post(vllm, "/v1/chat/completions", { messages, stop: "STOP", include_stop_str_in_output: true, ...noThinking });
    expect(json.choices[0].message.content).toBe("Alpha beta. STOP");
    expect(json.choices[0].stop_reason).toBe("STOP");
  });

  test("chat: a stop string that never appears changes nothing (EOS: stop_reason null)", async () => {
    const { json } = await post(vllm, "/v1/chat/completions", { messages, stop: ["zzz"], ...noThinking });
    expect(json.choices[0].message.content).toBe(ANSWER);
    expect(json.choices[0].stop_reason).toBeNull();
  });

  test("chat stream: deltas add up to the trimmed text, the last chunk carries stop_reason", async () => {
    const res = await fetch(`${vllm.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages, stop: ["STOP"], stream: true, return_token_ids: true, ...noThinking }),
    });
    const chunks = (await res.text())
      .split("\n\n")
      .filter((e) => e.startsWith("data: {"))
      .map((e) => JSON.parse(e.slice(6)));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("")).toBe("Alpha beta. ");
    const last = chunks.at(-1).choices[0];
    expect([last.finish_reason, last.stop_reason]).toEqual(["stop", "STOP"]);
    expect(decode(chunks.flatMap((c) => c.choices[0]?.token_ids ?? []))).toContain("STOP");
  });

  test("completions: trimmed text and stop_reason, streamed and not", async () => {
    const promptIds = template.renderIds(messages, { enableThinking: false });
    const { json } = await post(vllm, "/v1/completions", { prompt: promptIds, max_tokens: null, stop: ["STOP"], return_token_ids: true });
    expect(json.choices[0].text).toBe("Alpha beta. ");
    expect([json.choices[0].finish_reason, json.choices[0].stop_reason]).toEqual(["stop", "STOP"]);
    const res = await fetch(`${vllm.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt: promptIds, max_tokens: null, stop: ["STOP"], stream: true }),
    });
    const chunks = (await res.text())
      .split("\n\n")
      .filter((e) => e.startsWith("data: {"))
      .map((e) => JSON.parse(e.slice(6)));
    expect(chunks.map((c) => c.choices[0].text).join("")).toBe("Alpha beta. ");
    expect(chunks.at(-1).choices[0].stop_reason).toBe("STOP");
  });

  test("a budget that ends before the stop string is a length finish without stop_reason", async () => {
    const { json } = await post(vllm, "/v1/chat/completions", { messages, stop: ["STOP"], max_tokens: 2, ...noThinking });
    expect([json.choices[0].finish_reason, json.choices[0].stop_reason]).toEqual(["length", null]);
  });

  test("an empty stop string is refused", async () => {
    const { status, json } = await post(vllm, "/v1/chat/completions", { messages, stop: [""] });
    expect(status).toBe(400);
    expect(json.error.message).toBe("stop cannot contain an empty string.");
  });
});

describe("stop strings, SGLang dialect", () => {
  test("chat: matched_stop is the stop string; no_stop_trim keeps it", async () => {
    const trimmed = (await post(sglang, "/v1/chat/completions", { messages, stop: ["STOP"], logprobs: true, return_meta_info: true, ...noThinking })).json
      .choices[0];
    expect(trimmed.message.content).toBe("Alpha beta. ");
    expect([trimmed.finish_reason, trimmed.matched_stop]).toEqual(["stop", "STOP"]);
    expect(trimmed.meta_info.finish_reason).toEqual({ type: "stop", matched: "STOP" });
    expect(decode(trimmed.meta_info.output_token_logprobs.map((t: any[]) => t[1]))).toContain("STOP");
    const kept = (await post(sglang, "/v1/chat/completions", { messages, stop: ["STOP"], no_stop_trim: true, ...noThinking })).json.choices[0];
    expect(kept.message.content).toBe("Alpha beta. STOP");
  });

  test("/generate: sampling_params.stop ends the text; finish_reason matched is the string", async () => {
    const inputIds = template.renderIds(messages, { enableThinking: false });
    const { json } = await post(sglang, "/generate", { input_ids: inputIds, sampling_params: { max_new_tokens: 100, stop: ["STOP"] }, return_logprob: true });
    expect(json.text).toBe("Alpha beta. ");
    expect(json.meta_info.finish_reason).toEqual({ type: "stop", matched: "STOP" });
    expect(decode(json.output_ids)).toContain("STOP");
    expect(json.meta_info.output_token_logprobs.map((t: any[]) => t[1])).toEqual(json.output_ids);
  });
});
