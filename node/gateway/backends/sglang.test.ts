// The sglang backend against the mock engine speaking SGLang's API, directly and behind a router.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startMockEngine } from "../../mock-engine/index.ts";
import { getChatTemplate, pivotToTemplateMessages, pivotToTemplateTools } from "../../tokenizer/index.ts";
import { createBackend } from "./index.ts";
import { call, chatRequest } from "../../../test/support/gateway/backend-fixtures.ts";

type Engine = Awaited<ReturnType<typeof startMockEngine>>;
let w1: Engine;
let w2: Engine;
beforeAll(async () => {
  w1 = await startMockEngine({ port: 0, dialect: "sglang" });
  w2 = await startMockEngine({ port: 0, dialect: "sglang" });
});
afterAll(async () => {
  await Promise.all([w1.stop(), w2.stop()]);
});

describe("sglang backend", () => {
  test("captures prompt ids (the rendered template) and (logprob, id) pairs from meta_info", async () => {
    const backend = createBackend("sglang", { urls: [w1.url] });
    const request = chatRequest([{ role: "user", content: "make the file" }]);
    const result = await call(backend, request);
    const expected = getChatTemplate().renderIds(pivotToTemplateMessages(request.messages), { tools: pivotToTemplateTools(request.tools) });
    expect(Array.from(result.tokens!.promptIds)).toEqual(expected);
    expect(result.tokens!.logprobs.length).toBe(result.tokens!.outputIds.length);
    expect(result.tokens!.outputIds.at(-1)).toBe(getChatTemplate().tokenizer.eosTokenId);
    expect(result.response.tool_calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([["bash", { command: "echo hello > out.txt" }]]);
    expect(result.response.finish_reason).toBe("tool_calls");
  });

  test("behind a router, workers are listed and called directly with sticky sessions", async () => {
    // Stand-in for sglang-router's worker listing (GET /workers, sgl_model_gateway.md); it never
    // proxies generation, so any call that reaches it fails the test.
    let generationCallsAtRouter = 0;
    const router = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(req) {
        if (new URL(req.url).pathname === "/workers") {
          return Response.json({
            workers: [
              { id: "1", url: w1.url, model_id: "Qwen/Qwen3-8B", worker_type: "regular", is_healthy: true, load: 0 },
              { id: "2", url: w2.url, model_id: "Qwen/Qwen3-8B", worker_type: "regular", is_healthy: true, load: 0 },
              { id: "3", url: "http://127.0.0.1:9", model_id: "Qwen/Qwen3-8B", worker_type: "regular", is_healthy: false, load: 0 },
            ],
            total: 3,
          });
        }
        generationCallsAtRouter++;
        return new Response("not a worker", { status: 500 });
      },
    });
    try {
      const backend = createBackend("sglang", { urls: [`http://127.0.0.1:${router.port}`], router: true, retries: 0 });
      const request = chatRequest([{ role: "user", content: "hi" }], { tools: [] });
      const a = await call(backend, request, "a");
      const b = await call(backend, request, "b");
      expect([a.engineUrl, b.engineUrl].sort()).toEqual([w1.url, w2.url].sort());
      expect((await call(backend, request, "a")).engineUrl).toBe(a.engineUrl);
      expect(generationCallsAtRouter).toBe(0);
    } finally {
      router.stop(true);
    }
  });
});
