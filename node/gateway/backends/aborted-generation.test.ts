// An engine that answers 200 with finish_reason "abort" (vLLM FinishReason.ABORT, SGLang
// FINISH_ABORT) cut the sample off: every backend turns that answer into an engine_error, so the
// call is recorded as failed and the harness gets a 5xx, never a clean "stop".
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PolarError } from "../../../protocol/errors.ts";
import { createBackend } from "./index.ts";
import type { BackendKind, BackendOptionsInput } from "./options.ts";
import { call, chatRequest } from "../../../test/support/gateway/backend-fixtures.ts";

/** Stand-in engine: the mock engine never aborts, so this one answers every call as an aborted one. */
let engine: ReturnType<typeof Bun.serve>;
let url: string;
beforeAll(() => {
  const answers: Record<string, unknown> = {
    "/v1/chat/completions": {
      id: "chatcmpl-aborted",
      prompt_token_ids: [1, 2, 3],
      choices: [{ message: { content: "Partial" }, finish_reason: "abort", token_ids: [9707], logprobs: { content: [{ logprob: -0.5 }] } }],
      usage: { prompt_tokens: 3, completion_tokens: 1 },
    },
    "/v1/completions": {
      id: "cmpl-aborted",
      choices: [{ text: "Partial", finish_reason: "abort", token_ids: [9707], prompt_token_ids: [1, 2, 3], logprobs: { token_logprobs: [-0.5] } }],
    },
    "/generate": {
      text: "Partial",
      output_ids: [9707],
      meta_info: {
        id: "aborted",
        finish_reason: { type: "abort", message: "Abort in waiting queue", status_code: null, err_type: null },
        output_token_logprobs: [[-0.5, 9707, null]],
      },
    },
    "/v1/models": { data: [{ id: "Qwen/Qwen3-8B", max_model_len: 4096 }] },
  };
  engine = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req) => {
      const answer = answers[new URL(req.url).pathname];
      return answer === undefined ? new Response("not found", { status: 404 }) : Response.json(answer);
    },
  });
  url = `http://127.0.0.1:${engine.port}`;
});
afterAll(() => {
  engine.stop(true);
});

const BACKENDS: { name: string; kind: BackendKind; options?: Partial<BackendOptionsInput>; engineMessage?: string }[] = [
  { name: "vllm", kind: "vllm" },
  { name: "openai", kind: "openai" },
  { name: "sglang chat", kind: "sglang" },
  { name: "sglang generate", kind: "sglang", options: { sglangMode: "generate" }, engineMessage: "Abort in waiting queue" },
  { name: "tito on vLLM completions", kind: "tito" },
  { name: "tito on SGLang generate", kind: "tito", options: { titoEngine: "sglang" }, engineMessage: "Abort in waiting queue" },
];

describe.each(BACKENDS)("$name backend", ({ kind, options, engineMessage }) => {
  test("an aborted generation fails the call as engine_error", async () => {
    const backend = createBackend(kind, { urls: [url], retries: 0, ...options });
    const err = await call(backend, chatRequest([{ role: "user", content: "hi" }], { tools: [] })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PolarError);
    const polar = err as PolarError;
    expect(polar.code).toBe("engine_error");
    expect(polar.status).toBe(502);
    expect(polar.message).toStartWith("engine aborted the generation before it finished");
    if (engineMessage !== undefined) expect(polar.message).toContain(engineMessage);
  });
});
