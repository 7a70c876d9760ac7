// Chat Completions request shapes observed from real harnesses (see /work/shared/harnesses.md):
// Qwen's array tool content and parameter-less tool, Pi's max_completion_tokens, reasoning passed
// back, thinking switches, and bad bodies naming their field.
import { describe, expect, test } from "bun:test";
import { PolarError } from "../../../../protocol/errors.ts";
import { chatDialect } from "./index.ts";

describe("chat parseRequest", () => {
  test("Qwen Code turn 2: array user content, content:null + tool_calls, array tool content, tool without parameters", () => {
    const pivot = chatDialect.parseRequest({
      model: "fake-model",
      max_tokens: 32000,
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: "system", content: "You are Qwen Code." },
        {
          role: "user",
          content: [
            { type: "text", text: "<system-reminder>skills</system-reminder>" },
            { type: "text", text: "Create out.txt" },
          ],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_a", type: "function", function: { name: "run_shell_command", arguments: '{"command":"echo hello > out.txt"}' } }],
        },
        {
          role: "tool",
          tool_call_id: "call_a",
          content: [{ type: "text", text: "Command: echo hello > out.txt\nExit Code: 0" }],
        },
      ],
      tools: [
        { type: "function", function: { name: "get_goal", description: "Read the goal" } },
        {
          type: "function",
          function: { name: "run_shell_command", parameters: { type: "object", properties: { command: { type: "string" } } } },
        },
      ],
    });
    expect(pivot).toEqual({
      model: "fake-model",
      messages: [
        { role: "system", content: "You are Qwen Code." },
        { role: "user", content: "<system-reminder>skills</system-reminder>\nCreate out.txt" },
        {
          role: "assistant",
          content: "",
          tool_calls: [{ id: "call_a", name: "run_shell_command", arguments: '{"command":"echo hello > out.txt"}' }],
        },
        { role: "tool", content: "Command: echo hello > out.txt\nExit Code: 0", tool_call_id: "call_a" },
      ],
      tools: [
        { name: "get_goal", description: "Read the goal", parameters: { type: "object", properties: {} } },
        { name: "run_shell_command", parameters: { type: "object", properties: { command: { type: "string" } } } },
      ],
      sampling: { max_tokens: 32000 },
      stream: true,
      render_hints: { include_usage: true },
    });
  });

  test("Pi: max_completion_tokens, developer role, string tool content, store:false ignored", () => {
    const pivot = chatDialect.parseRequest({
      model: "fake-model",
      store: false,
      max_completion_tokens: 16384,
      messages: [
        { role: "developer", content: "You are pi." },
        { role: "user", content: [{ type: "text", text: "go" }] },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: "{}" } }] },
        { role: "tool", content: "(no output)", tool_call_id: "c1" },
      ],
      tools: [{ type: "function", function: { name: "bash", strict: false, parameters: { type: "object" } } }],
    });
    expect(pivot.sampling).toEqual({ max_tokens: 16384 });
    expect(pivot.messages[0]).toEqual({ role: "system", content: "You are pi." });
    expect(pivot.messages[3]).toEqual({ role: "tool", content: "(no output)", tool_call_id: "c1" });
    expect(pivot.stream).toBe(false);
  });

  test("max_completion_tokens wins over max_tokens; sampling fields map; stop string becomes a list", () => {
    const pivot = chatDialect.parseRequest({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 10,
      max_completion_tokens: 20,
      temperature: 0.7,
      top_p: 0.9,
      top_k: 20,
      stop: "</done>",
      seed: 42,
      tool_choice: { type: "function", function: { name: "bash" } },
    });
    expect(pivot.sampling).toEqual({ max_tokens: 20, temperature: 0.7, top_p: 0.9, top_k: 20, stop: ["</done>"], seed: 42 });
    expect(pivot.tool_choice).toEqual({ name: "bash" });
  });

  test("assistant reasoning_content (or reasoning) is passed back as pivot reasoning", () => {
    const pivot = chatDialect.parseRequest({
      model: "m",
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "a", reasoning_content: "thought one" },
        { role: "user", content: "again" },
        { role: "assistant", content: "b", reasoning: "thought two" },
      ],
    });
    expect(pivot.messages.map((message) => message.reasoning)).toEqual([undefined, "thought one", undefined, "thought two"]);
  });

  test("thinking: enable_thinking wins; reasoning_effort none/minimal → off, low+ → on, absent → default", () => {
    const base = { model: "m", messages: [{ role: "user", content: "hi" }] };
    expect(chatDialect.parseRequest(base).thinking).toBeUndefined();
    expect(chatDialect.parseRequest({ ...base, reasoning_effort: "none" }).thinking).toBe(false);
    expect(chatDialect.parseRequest({ ...base, reasoning_effort: "minimal" }).thinking).toBe(false);
    expect(chatDialect.parseRequest({ ...base, reasoning_effort: "low" }).thinking).toBe(true);
    expect(chatDialect.parseRequest({ ...base, reasoning_effort: "high" }).thinking).toBe(true);
    expect(chatDialect.parseRequest({ ...base, reasoning_effort: "high", chat_template_kwargs: { enable_thinking: false } }).thinking).toBe(false);
  });

  test("non-function tools are not offered; image parts are dropped from content", () => {
    const pivot = chatDialect.parseRequest({
      model: "m",
      messages: [
        {
          role: "user",
          content: [
            { type: "image_url", image_url: { url: "data:," } },
            { type: "text", text: "what?" },
          ],
        },
      ],
      tools: [{ type: "custom", custom: { name: "apply_patch" } }],
    });
    expect(pivot.tools).toEqual([]);
    expect(pivot.messages[0]?.content).toBe("what?");
  });

  test.each([
    [{ messages: [{ role: "user", content: "x" }] }, /model/],
    [{ model: "m", messages: [{ role: "narrator", content: "x" }] }, /messages\.0\.role/],
    [{ model: "m", messages: [{ role: "tool", content: "x" }] }, /messages\.0\.tool_call_id/],
    [{ model: "m", messages: [{ role: "user", content: "x" }], max_tokens: "many" }, /max_tokens/],
    [{ model: "m", messages: [{ role: "user", content: "x" }], tools: [{ type: "function", function: { parameters: {} } }] }, /tools\.0\.function\.name/],
    [{ model: "m", messages: [] }, /messages/],
    [{ model: "m", messages: [{ role: "user", content: "x" }], tools: [{ type: "function" }] }, /tools\.0\.function/],
    ["not an object", /body|expected object/],
  ])("bad body %j → bad_request naming the field", (body, field) => {
    let caught: unknown;
    try {
      chatDialect.parseRequest(body);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PolarError);
    expect((caught as PolarError).code).toBe("bad_request");
    expect((caught as PolarError).message).toMatch(field);
  });
});

describe("chat render", () => {
  test("a tool-only turn has content null; reasoning goes to reasoning_content", () => {
    const request = chatDialect.parseRequest({ model: "m", messages: [{ role: "user", content: "hi" }] });
    const body = chatDialect.renderResponse(
      {
        id: "x1",
        model: "m",
        content: "",
        reasoning: "hmm",
        tool_calls: [{ id: "call_1", name: "bash", arguments: "{}" }],
        finish_reason: "tool_calls",
        usage: { prompt_tokens: 1, completion_tokens: 2 },
      },
      request,
    ) as { choices: { message: Record<string, unknown> }[] };
    expect(body.choices[0]?.message).toEqual({
      role: "assistant",
      content: null,
      refusal: null,
      reasoning_content: "hmm",
      tool_calls: [{ id: "call_1", type: "function", function: { name: "bash", arguments: "{}" } }],
    });
  });

  test("whitespace-only text beside tool calls is shown as no text (body and stream)", () => {
    const request = chatDialect.parseRequest({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true });
    const response = {
      id: "x3",
      model: "m",
      content: "\n\n",
      reasoning: "\n\n",
      tool_calls: [{ id: "call_1", name: "bash", arguments: "{}" }],
      finish_reason: "tool_calls" as const,
      usage: { prompt_tokens: 1, completion_tokens: 2 },
    };
    const body = chatDialect.renderResponse(response, request) as { choices: { message: { content: unknown; reasoning_content: unknown } }[] };
    expect(body.choices[0]?.message.content).toBeNull();
    expect(body.choices[0]?.message.reasoning_content).toBe("\n\n");
    const deltas = chatDialect
      .renderStream(response, request)
      .slice(0, -1)
      .map((frame) => JSON.parse(frame.slice("data: ".length)).choices[0].delta);
    expect(deltas.map((delta) => delta.content).filter((content) => content)).toEqual([]);
  });

  test("the stream ends with [DONE] and carries usage:null on every chunk when usage was asked for", () => {
    const request = chatDialect.parseRequest({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const frames = chatDialect.renderStream(
      { id: "x2", model: "m", content: "ok", tool_calls: [], finish_reason: "stop", usage: { prompt_tokens: 3, completion_tokens: 1 } },
      request,
    );
    expect(frames.at(-1)).toBe("data: [DONE]\n\n");
    const chunks = frames.slice(0, -1).map((frame) => JSON.parse(frame.slice("data: ".length)));
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } });
  });
});
