import { describe, expect, test } from "bun:test";
import { parseContextLength } from "../context-length.ts";
import { engineErrorMessage, engineHttpError } from "./engine-errors.ts";

describe("engine error mapping", () => {
  test("messages are read from OpenAI, vLLM/SGLang and FastAPI error bodies", () => {
    expect(engineErrorMessage(JSON.stringify({ error: { message: "bad tool", type: "BadRequestError", code: 400 } }))).toBe("bad tool");
    expect(engineErrorMessage(JSON.stringify({ object: "error", message: "no such model", type: "NotFoundError", code: 404 }))).toBe("no such model");
    expect(engineErrorMessage(JSON.stringify({ detail: "Not Found" }))).toBe("Not Found");
    expect(engineErrorMessage("upstream exploded")).toBe("upstream exploded");
  });

  test("vLLM's max_tokens-too-large wording becomes context_length with its numbers", () => {
    const message =
      "'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778).";
    const err = engineHttpError(400, JSON.stringify({ error: { message, type: "BadRequestError", code: 400 } }), "http://e");
    expect(err.code).toBe("context_length");
    expect(err.message).toBe(message);
    expect(err.details).toMatchObject({ max_context_tokens: 4096, prompt_tokens: 2778, max_tokens: 8000, status: 400 });
  });

  test("older vLLM, decoder-prompt and SGLang wordings are recognised", () => {
    expect(
      parseContextLength(
        "This model's maximum context length is 32768 tokens. However, you requested 33000 tokens (30000 in the messages, 3000 in the completion).",
      ),
    ).toEqual({ max_context_tokens: 32768, prompt_tokens: 30000, max_tokens: 3000 });
    expect(parseContextLength("The decoder prompt (length 5000) is longer than the maximum model length of 4096.")).toEqual({
      max_context_tokens: 4096,
      prompt_tokens: 5000,
    });
    expect(parseContextLength("Input length (5000) exceeds model's maximum context length (4096).")).toEqual({
      max_context_tokens: 4096,
      prompt_tokens: 5000,
    });
    expect(
      parseContextLength(
        "This model's maximum context length is 32768 tokens. However, you requested 32818 tokens in the messages, Please reduce the length of the messages.",
      ),
    ).toEqual({ max_context_tokens: 32768, prompt_tokens: 32818 });
    expect(
      parseContextLength(
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.",
      ),
    ).toEqual({ max_context_tokens: 128000, prompt_tokens: 130000 });
    expect(parseContextLength("The input (150000 tokens) is longer than the model's context length (128000 tokens).")).toEqual({
      max_context_tokens: 128000,
      prompt_tokens: 150000,
    });
    expect(engineHttpError(400, JSON.stringify({ message: "The input (9 tokens) is longer than the model's context length (8 tokens)." }), "u").code).toBe(
      "context_length",
    );
  });

  test("other statuses map to bad_request, overloaded, engine_error and engine_unavailable", () => {
    expect(engineHttpError(400, JSON.stringify({ error: { message: "tools[0] invalid" } }), "u")).toMatchObject({
      code: "bad_request",
      message: "tools[0] invalid",
    });
    // Every 4xx is the request's fault (a 400 to the client), except the gateway's own engine credentials.
    expect(engineHttpError(404, JSON.stringify({ message: "The model `x` does not exist." }), "u").code).toBe("bad_request");
    expect(engineHttpError(413, "too big", "u").code).toBe("bad_request");
    expect(engineHttpError(401, "bad key", "u").code).toBe("engine_error");
    expect(engineHttpError(429, "slow down", "u").code).toBe("overloaded");
    expect(engineHttpError(503, "warming up", "u").code).toBe("engine_unavailable");
  });

  test("what a client sees of an engine's message is one short line without URLs; the log keeps it whole", () => {
    const traceback = 'Traceback (most recent call last):\n  File "/srv/vllm/serve.py", line 9\nRuntimeError: see http://10.0.0.7:8000/debug';
    const err = engineHttpError(500, JSON.stringify({ message: traceback }), "http://10.0.0.7:8000");
    expect(err.message).toBe("engine 500: Traceback (most recent call last):");
    expect(err.details).toMatchObject({ engineUrl: "http://10.0.0.7:8000", engineMessage: traceback });
    const withUrl = engineHttpError(400, JSON.stringify({ message: "bad input, see https://internal.example/x?y=1 for help" }), "u");
    expect(withUrl.message).toBe("bad input, see <url> for help");
  });
});
