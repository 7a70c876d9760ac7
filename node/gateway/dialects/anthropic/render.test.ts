import { describe, expect, test } from "bun:test";
import { ERROR_CODES, PolarError } from "../../../../protocol/errors.ts";
import type { PivotRequest, PivotResponse } from "../../pivot.ts";
import { renderCountTokens } from "./count-tokens.ts";
import { anthropicDialect } from "./index.ts";
import { thinkingSignature } from "./content.ts";

const request: PivotRequest = { model: "fake-model", messages: [], tools: [], sampling: {}, stream: false };

function response(overrides: Partial<PivotResponse> = {}): PivotResponse {
  return {
    id: "chatcmpl-42",
    model: "Qwen/Qwen3-0.6B",
    content: "",
    tool_calls: [],
    finish_reason: "stop",
    usage: { prompt_tokens: 120, completion_tokens: 7 },
    ...overrides,
  };
}

/** SSE frames → [{event, data}] with data parsed. */
function events(frames: string[]): { event: string; data: Record<string, unknown> }[] {
  return frames.map((frame) => {
    expect(frame.endsWith("\n\n")).toBe(true);
    const lines = frame.trimEnd().split("\n");
    const event = lines.find((line) => line.startsWith("event: "))?.slice(7) ?? "";
    const data = lines.find((line) => line.startsWith("data: "))?.slice(6) ?? "null";
    return { event, data: JSON.parse(data) as Record<string, unknown> };
  });
}

describe("renderResponse", () => {
  test("thinking, text and tool_use blocks in that order", () => {
    const pivot = response({
      reasoning: "Let me run it.",
      content: "Running.",
      tool_calls: [{ id: "call_1", name: "Bash", arguments: '{"command":"echo hello > out.txt"}' }],
      finish_reason: "tool_calls",
    });
    expect(anthropicDialect.renderResponse(pivot, request)).toEqual({
      id: "msg_chatcmpl-42",
      type: "message",
      role: "assistant",
      model: "fake-model",
      content: [
        { type: "thinking", thinking: "Let me run it.", signature: thinkingSignature(pivot) },
        { type: "text", text: "Running.", citations: null },
        { type: "tool_use", id: "toolu_call_1", name: "Bash", input: { command: "echo hello > out.txt" } },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      stop_details: null,
      container: null,
      usage: { input_tokens: 120, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
    expect(thinkingSignature(pivot).length).toBeGreaterThan(0);
  });

  test("no text block for empty content; ids already prefixed or unsafe", () => {
    const body = anthropicDialect.renderResponse(
      response({
        id: "msg_abc",
        tool_calls: [
          { id: "toolu_x", name: "a", arguments: "{}" },
          { id: "c.2:3", name: "b", arguments: "{}" },
        ],
      }),
      request,
    ) as { id: string; content: { type: string; id?: string }[]; stop_reason: string };
    expect(body.id).toBe("msg_abc");
    expect(body.content.map((block) => [block.type, block.id])).toEqual([
      ["tool_use", "toolu_x"],
      ["tool_use", "toolu_c_2_3"],
    ]);
    expect(body.stop_reason).toBe("tool_use");
  });

  test("whitespace-only text beside tool calls is no text block; alone it is kept", () => {
    const spaced = response({ reasoning: "\n\n", content: "\n\n", tool_calls: [{ id: "c", name: "a", arguments: "{}" }], finish_reason: "tool_calls" });
    const withCall = anthropicDialect.renderResponse(spaced, request) as { content: { type: string }[] };
    expect(withCall.content.map((block) => block.type)).toEqual(["thinking", "tool_use"]);
    const streamed = events(anthropicDialect.renderStream(spaced, request)).filter(({ event }) => event === "content_block_start");
    expect(streamed.map(({ data }) => (data.content_block as { type: string }).type)).toEqual(["thinking", "tool_use"]);
    const alone = anthropicDialect.renderResponse({ ...spaced, tool_calls: [], finish_reason: "stop" }, request) as { content: unknown[] };
    expect(alone.content[1]).toEqual({ type: "text", text: "\n\n", citations: null });
  });

  test("arguments that are not a JSON object become an empty input", () => {
    const body = anthropicDialect.renderResponse(
      response({
        tool_calls: [
          { id: "1", name: "a", arguments: '{"command": "ls"' },
          { id: "2", name: "a", arguments: "[1]" },
          { id: "3", name: "a", arguments: "" },
        ],
        finish_reason: "tool_calls",
      }),
      request,
    ) as { content: { input: unknown }[] };
    expect(body.content.map((block) => block.input)).toEqual([{}, {}, {}]);
  });

  test.each([
    [{ finish_reason: "stop" }, "end_turn", null],
    [{ finish_reason: "length" }, "max_tokens", null],
    [{ finish_reason: "stop", stop_sequence: "END" }, "stop_sequence", "END"],
    [{ finish_reason: "length", stop_sequence: "END" }, "max_tokens", null],
  ] as const)("stop reason case %#", (overrides, stopReason, stopSequence) => {
    const body = anthropicDialect.renderResponse(response({ content: "x", ...overrides }), request) as Record<string, unknown>;
    expect(body.stop_reason).toBe(stopReason);
    expect(body.stop_sequence).toBe(stopSequence);
  });
});

describe("renderStream", () => {
  test("the full event sequence for thinking + text + tool_use", () => {
    const pivot = response({
      reasoning: "think",
      content: "Hi",
      tool_calls: [{ id: "call_1", name: "Bash", arguments: '{"command":"ls"}' }],
      finish_reason: "tool_calls",
    });
    const sequence = events(anthropicDialect.renderStream(pivot, { ...request, stream: true }));
    expect(sequence.every(({ event, data }) => data.type === event)).toBe(true);
    expect(sequence.map(({ event, data }) => (event === "content_block_delta" ? `delta:${(data.delta as { type: string }).type}` : event))).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "delta:thinking_delta",
      "delta:signature_delta",
      "content_block_stop",
      "content_block_start",
      "delta:text_delta",
      "content_block_stop",
      "content_block_start",
      "delta:input_json_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const start = sequence[0]?.data.message as Record<string, unknown>;
    expect(start).toMatchObject({ id: "msg_chatcmpl-42", model: "fake-model", content: [], stop_reason: null });
    expect(start.usage).toMatchObject({ input_tokens: 120, output_tokens: 0 });
    expect(sequence[9]?.data).toEqual({
      type: "content_block_start",
      index: 2,
      content_block: { type: "tool_use", id: "toolu_call_1", name: "Bash", input: {} },
    });
    expect(sequence[10]?.data.delta).toEqual({ type: "input_json_delta", partial_json: '{"command":"ls"}' });
    expect(sequence[12]?.data).toMatchObject({
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: { input_tokens: 120, output_tokens: 7 },
    });
  });

  test("empty content and no calls gives no content blocks", () => {
    const sequence = events(anthropicDialect.renderStream(response(), request));
    expect(sequence.map(({ event }) => event)).toEqual(["message_start", "ping", "message_delta", "message_stop"]);
  });
});

describe("renderError", () => {
  const expected = {
    bad_request: [400, "invalid_request_error"],
    too_large: [413, "request_too_large"],
    unauthorized: [401, "authentication_error"],
    forbidden: [403, "permission_error"],
    not_found: [404, "not_found_error"],
    conflict: [409, "invalid_request_error"],
    context_length: [400, "invalid_request_error"],
    engine_unavailable: [502, "api_error"],
    engine_timeout: [504, "timeout_error"],
    engine_error: [502, "api_error"],
    overloaded: [529, "overloaded_error"],
    client_closed: [499, "invalid_request_error"],
    internal: [500, "api_error"],
  } as const;

  test.each([...ERROR_CODES])("%s", (code) => {
    const [status, type] = expected[code];
    const { status: rendered, body } = anthropicDialect.renderError(new PolarError(code, "boom"));
    expect(rendered).toBe(status);
    expect((body as { type: string }).type).toBe("error");
    expect((body as { error: { type: string } }).error.type).toBe(type);
  });

  test.each([
    ["prompt is too long: 9 tokens > 8 maximum", undefined, "prompt is too long: 9 tokens > 8 maximum"],
    ["too long", { prompt_tokens: 4000, max_tokens: 1000, max_context_tokens: 4096, status: 400 }, "prompt is too long: 5000 tokens > 4096 maximum"],
    ["too long", { prompt_tokens: 5000, max_context_tokens: 4096 }, "prompt is too long: 5000 tokens > 4096 maximum"],
    [
      "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).",
      undefined,
      "prompt is too long: 5000 tokens > 4096 maximum",
    ],
    [
      "Requested token count exceeds the model's maximum context length of 4096 tokens. You requested a total of 5000 tokens: 4000 tokens from the input messages and 1000 tokens for the completion.",
      undefined,
      "prompt is too long: 5000 tokens > 4096 maximum",
    ],
    ["the window is full", undefined, "prompt is too long: the window is full"],
  ])("context_length %#", (message, details, wanted) => {
    const { body } = anthropicDialect.renderError(new PolarError("context_length", message, details));
    expect((body as { error: { message: string } }).error.message).toBe(wanted);
  });

  test("stream errors are one `event: error` frame with the same body", () => {
    const error = new PolarError("overloaded", "busy");
    const [frame, ...rest] = events(anthropicDialect.renderStreamError(error));
    expect(rest).toEqual([]);
    expect(frame).toEqual({ event: "error", data: { type: "error", error: { type: "overloaded_error", message: "busy" } } });
  });
});

test("renderCountTokens", () => {
  expect(renderCountTokens(321)).toEqual({ input_tokens: 321 });
});
