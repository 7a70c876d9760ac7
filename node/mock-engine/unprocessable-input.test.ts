import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startMockEngine, type RunningMockEngine } from "./server.ts";

let engine: RunningMockEngine;
beforeAll(async () => {
  engine = await startMockEngine({ port: 0 });
});
afterAll(async () => {
  await engine.stop();
});

async function post(path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${engine.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

function deepSchema(depth: number): unknown {
  let schema: unknown = { type: "string" };
  for (let i = 0; i < depth; i++) schema = { type: "object", properties: { a: schema } };
  return schema;
}

const hello = [{ role: "user", content: "hi" }];

describe("input the template or tokenizer cannot take is a 400, as vLLM answers it", () => {
  test("a tool schema nested 10,000 deep", async () => {
    const tools = [{ type: "function", function: { name: "f", parameters: deepSchema(10_000) } }];
    for (const path of ["/v1/chat/completions", "/tokenize"]) {
      const { status, json } = await post(path, { model: "Qwen/Qwen3-8B", messages: hello, tools, max_tokens: 8 });
      expect(status).toBe(400);
      expect(json.error).toMatchObject({ type: "BadRequestError", code: 400 });
      expect(json.error.message).toStartWith("The chat template could not be applied to the request");
    }
  }, 120_000);

  test("a one-word prompt of 1 MB, then the engine serves the next request as usual", async () => {
    const { status, json } = await post("/v1/completions", { model: "Qwen/Qwen3-8B", prompt: "x".repeat(1_000_000), max_tokens: 8 });
    expect(status).toBe(400);
    expect(json.error).toEqual({ message: "The tokenizer could not encode the prompt (1000000 characters).", type: "BadRequestError", param: null, code: 400 });
    const next = await post("/v1/chat/completions", { model: "Qwen/Qwen3-8B", messages: hello, max_tokens: 8 });
    expect(next.status).toBe(200);
  }, 120_000);
});
