// The vllm and openai backends against the mock engine speaking vLLM's API.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { z } from "zod";
import { PolarError } from "../../../protocol/errors.ts";
import { startMockEngine } from "../../mock-engine/index.ts";
import { getTokenizer } from "../../tokenizer/index.ts";
import { createBackend } from "./index.ts";
import { toOpenAiMessages } from "./openai-chat.ts";
import { call, chatRequest, continueConversation } from "../../../test/support/gateway/backend-fixtures.ts";

let engine: Awaited<ReturnType<typeof startMockEngine>>;
let small: Awaited<ReturnType<typeof startMockEngine>>;
beforeAll(async () => {
  engine = await startMockEngine({
    port: 0,
    script: {
      steps: [
        { think: "plan it", shell: "echo hello > out.txt" },
        { think: "all good", text: "Done." },
      ],
    },
  });
  small = await startMockEngine({ port: 0, maxModelLen: 64 });
});
afterAll(async () => {
  await Promise.all([engine.stop(), small.stop()]);
});

const Tokenized = z.object({ tokens: z.array(z.number().int()), count: z.number().int() });

/** The engine's own tokenization of a chat prompt (vLLM `POST /tokenize` with messages). */
async function engineTokenize(request: ReturnType<typeof chatRequest>): Promise<number[]> {
  const res = await fetch(`${engine.url}/tokenize`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: request.model,
      messages: toOpenAiMessages(request.messages, "reasoning_and_content"),
      tools: request.tools.map((t) => ({ type: "function", function: t })),
      add_generation_prompt: true,
      ...(request.thinking !== undefined && { chat_template_kwargs: { enable_thinking: request.thinking } }),
    }),
  });
  expect(res.status).toBe(200);
  return Tokenized.parse(await res.json()).tokens;
}

describe("vllm backend", () => {
  test("captures the engine's prompt ids, sampled ids and one logprob per sampled id over a tool loop", async () => {
    const backend = createBackend("vllm", { urls: [engine.url] });
    const eos = getTokenizer().eosTokenId;
    let messages = [{ role: "user" as const, content: "make the file" }];
    let request = chatRequest(messages);
    for (let turn = 0; turn < 3; turn++) {
      const result = await call(backend, request);
      const tokens = result.tokens!;
      expect(Array.from(tokens.promptIds)).toEqual(await engineTokenize(request));
      expect(tokens.logprobs.length).toBe(tokens.outputIds.length);
      expect(tokens.outputIds.at(-1)).toBe(eos); // EOS is a sampled id with its own logprob
      expect(tokens.logprobs.every((l) => l <= 0)).toBe(true);
      expect(result.response.usage).toEqual({ prompt_tokens: tokens.promptIds.length, completion_tokens: tokens.outputIds.length });
      expect(result.engineUrl).toBe(engine.url);
      if (turn === 0) {
        expect(result.response.finish_reason).toBe("tool_calls");
        expect(result.response.reasoning?.trim()).toBe("plan it");
        expect(result.response.tool_calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([["bash", { command: "echo hello > out.txt" }]]);
      } else {
        expect(result.response.tool_calls).toEqual([]);
        expect(result.response.content.trim()).toBe("Done.");
      }
      messages = continueConversation(messages, result.response, "and again") as typeof messages;
      request = chatRequest(messages);
    }
  });

  test("the thinking switch reaches the template", async () => {
    const backend = createBackend("vllm", { urls: [engine.url] });
    const request = chatRequest([{ role: "user", content: "go" }], { thinking: false });
    const result = await call(backend, request);
    expect(result.response.reasoning).toBeUndefined();
    expect(Array.from(result.tokens!.promptIds)).toEqual(await engineTokenize(request));
  });

  test("a context overflow becomes context_length with the engine's numbers", async () => {
    const backend = createBackend("vllm", { urls: [small.url], retries: 2 });
    const long = chatRequest([{ role: "user", content: "word ".repeat(200) }], { tools: [] });
    const err = await backend.complete({ request: long, sessionId: "s", signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PolarError);
    const polar = err as PolarError;
    expect(polar.code).toBe("context_length");
    expect(polar.details).toMatchObject({ max_context_tokens: 64, attempts: 1 });
    expect((polar.details as { prompt_tokens?: number }).prompt_tokens).toBeGreaterThan(64);
  });

  test("listModels returns the served model", async () => {
    expect(await createBackend("vllm", { urls: [`${engine.url}/v1`] }).listModels()).toEqual(["Qwen/Qwen3-8B"]);
  });
});

describe("openai backend", () => {
  test("records text only and says so", async () => {
    const backend = createBackend("openai", { urls: [`${engine.url}/v1`] });
    const result = await call(backend, chatRequest([{ role: "user", content: "make the file" }]));
    expect(result.tokens).toBeNull();
    expect(result.notes).toEqual({ text_only: true });
    expect(result.response.tool_calls[0]?.name).toBe("bash");
    expect(result.response.usage.prompt_tokens).toBeGreaterThan(0);
  });
});
