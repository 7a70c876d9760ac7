// The OpenAI error shape for each PolarError code, and the context-overflow wording harnesses match.
import { describe, expect, test } from "bun:test";
import { PolarError } from "../../../protocol/errors.ts";
import { engineHttpError } from "../backends/engine-errors.ts";
import { openAiErrorObject, renderOpenAiError } from "./openai-errors.ts";

/** pi-ai's overflow detection matches wordings like these. */
const OVERFLOW_PATTERNS = [/maximum context length is \d+ tokens/i, /reduce the length of the messages/i];

describe("OpenAI error shape", () => {
  test("SGLang's overflow wording is rewritten as OpenAI's, with the numbers", () => {
    const error = engineHttpError(
      400,
      JSON.stringify({ object: "error", message: "The input (5000 tokens) is longer than the model's context length (4096 tokens)." }),
      "http://127.0.0.1:1",
    );
    expect(error.code).toBe("context_length");
    const wire = openAiErrorObject(error, "messages");
    expect(wire).toEqual({
      message: "This model's maximum context length is 4096 tokens. However, your messages resulted in 5000 tokens. Please reduce the length of the messages.",
      type: "invalid_request_error",
      param: "messages",
      code: "context_length_exceeded",
    });
  });

  test("an overflow without numbers still carries the phrases clients look for", () => {
    const wire = openAiErrorObject(new PolarError("context_length", "too long"), "input");
    expect(wire.message).toMatch(/maximum context length/);
    expect(wire.message).toMatch(OVERFLOW_PATTERNS[1]!);
    expect(wire.code).toBe("context_length_exceeded");
  });

  test("vLLM's wording passes through untouched", () => {
    const vllm =
      "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.";
    const error = engineHttpError(400, JSON.stringify({ object: "error", message: vllm }), "http://127.0.0.1:1");
    const wire = openAiErrorObject(error, "messages");
    expect(wire.message).toBe(vllm);
    for (const pattern of OVERFLOW_PATTERNS) expect(wire.message).toMatch(pattern);
  });

  test.each([
    ["bad_request", 400, "invalid_request_error", null],
    ["unauthorized", 401, "invalid_request_error", "invalid_api_key"],
    ["forbidden", 403, "invalid_request_error", "permission_denied"],
    ["not_found", 404, "invalid_request_error", "not_found"],
    ["engine_unavailable", 502, "server_error", "engine_unavailable"],
    ["engine_timeout", 504, "server_error", "timeout"],
    ["overloaded", 529, "server_error", "overloaded"],
    ["internal", 500, "server_error", null],
  ] as const)("%s → %d %s/%s", (code, status, type, wireCode) => {
    const rendered = renderOpenAiError(new PolarError(code, "why"), "messages");
    expect(rendered).toEqual({ status, body: { error: { message: "why", type, param: null, code: wireCode } } });
  });
});
