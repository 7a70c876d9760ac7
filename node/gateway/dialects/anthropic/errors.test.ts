// Anthropic's prompt-too-long wording built from the numbers the backend's engine-errors parsing
// found, whether they arrive as error details or only in the engine's own words.
import { describe, expect, test } from "bun:test";
import { PolarError } from "../../../../protocol/errors.ts";
import { engineHttpError } from "../../backends/engine-errors.ts";
import { promptTooLongMessage } from "./errors.ts";

const OLD_VLLM =
  "This model's maximum context length is 32768 tokens. However, you requested 32818 tokens in the messages, Please reduce the length of the messages.";

describe("promptTooLongMessage", () => {
  test("the same numbers whether read from the details or from the engine's words", () => {
    const mapped = engineHttpError(400, JSON.stringify({ object: "error", message: OLD_VLLM }), "http://127.0.0.1:1");
    expect(mapped.code).toBe("context_length");
    expect(promptTooLongMessage(mapped)).toBe("prompt is too long: 32818 tokens > 32768 maximum");
    expect(promptTooLongMessage(new PolarError("context_length", OLD_VLLM))).toBe("prompt is too long: 32818 tokens > 32768 maximum");
  });

  test("counts from the details are not summed with a completion count found only in the words", () => {
    const error = new PolarError("context_length", "Input length (5000) exceeds model's maximum context length (4096); 999 in the completion", {
      prompt_tokens: 5000,
    });
    expect(promptTooLongMessage(error)).toBe("prompt is too long: 5000 tokens > 4096 maximum");
  });

  test("details of the wrong type are ignored in favour of the words", () => {
    const error = new PolarError("context_length", "The input (9 tokens) is longer than the model's context length (8 tokens).", { prompt_tokens: "many" });
    expect(promptTooLongMessage(error)).toBe("prompt is too long: 9 tokens > 8 maximum");
  });
});
