// The anthropic backend's two conversions: pivot request → Messages body (system apart, tool
// results as user blocks, alternating roles, Anthropic's names for tool choice and stops), and a
// Messages answer → pivot response (text, thinking, tool_use, stop reasons, usage with cache).
import { describe, expect, test } from "bun:test";
import type { PivotRequest } from "../pivot.ts";
import { anthropicBody, DEFAULT_MAX_TOKENS, pivotFromAnthropic } from "./anthropic.ts";

const request: PivotRequest = {
  model: "claude-x",
  messages: [
    { role: "system", content: "be brief" },
    { role: "system", content: "use tools" },
    { role: "user", content: "make two files" },
    {
      role: "assistant",
      content: "On it.",
      reasoning: "two calls",
      tool_calls: [
        { id: "toolu_1", name: "bash", arguments: '{"command":"touch a"}' },
        { id: "toolu_2", name: "bash", arguments: "not json" },
      ],
    },
    { role: "tool", content: "ok", tool_call_id: "toolu_1", name: "bash" },
    { role: "tool", content: "ok too", tool_call_id: "toolu_2", name: "bash" },
    { role: "user", content: "thanks" },
    { role: "assistant", content: "" },
    { role: "user", content: "bye" },
  ],
  tools: [{ name: "bash", description: "run", parameters: { type: "object", properties: { command: { type: "string" } } } }],
  tool_choice: "required",
  sampling: { temperature: 0.5, top_p: 0.9, top_k: 20, stop: ["END"], seed: 7 },
  stream: true,
};

describe("pivot → Anthropic Messages body", () => {
  test("system text apart, tool results in the next user turn with its text, earlier reasoning and empty turns dropped, roles alternating", () => {
    const body = anthropicBody(request, undefined);
    expect(body.system).toBe("be brief\n\nuse tools");
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "make two files" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "On it." },
          { type: "tool_use", id: "toolu_1", name: "bash", input: { command: "touch a" } },
          { type: "tool_use", id: "toolu_2", name: "bash", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "ok" },
          { type: "tool_result", tool_use_id: "toolu_2", content: "ok too" },
          { type: "text", text: "thanks" },
          { type: "text", text: "bye" },
        ],
      },
    ]);
  });

  test("model, max_tokens (required: a default when none is set), tools, tool choice and sampling in Anthropic's names; never streams", () => {
    const body = anthropicBody(request, "served-model");
    expect(body).toMatchObject({
      model: "served-model",
      max_tokens: DEFAULT_MAX_TOKENS,
      stream: false,
      tools: [{ name: "bash", description: "run", input_schema: { type: "object", properties: { command: { type: "string" } } } }],
      tool_choice: { type: "any" },
      temperature: 0.5,
      top_p: 0.9,
      top_k: 20,
      stop_sequences: ["END"],
    });
    expect(body).not.toHaveProperty("seed");
    expect(anthropicBody({ ...request, tool_choice: { name: "bash" }, sampling: { max_tokens: 99 } }, undefined)).toMatchObject({
      model: "claude-x",
      max_tokens: 99,
      tool_choice: { type: "tool", name: "bash" },
    });
    expect(anthropicBody({ ...request, tool_choice: "none" }, undefined).tool_choice).toEqual({ type: "none" });
  });
});

describe("Anthropic answer → pivot response", () => {
  test("text joined, thinking as reasoning, tool_use as tool calls with JSON arguments, usage counting cached input", () => {
    const response = pivotFromAnthropic(
      {
        id: "msg_1",
        content: [
          { type: "thinking", thinking: "plan", signature: "sig" },
          { type: "text", text: "Running " },
          { type: "text", text: "it." },
          { type: "tool_use", id: "toolu_9", name: "bash", input: { command: "ls" } },
          { type: "server_tool_use", id: "x" },
        ],
        stop_reason: "tool_use",
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 1 },
      },
      "claude-x",
    );
    expect(response).toEqual({
      id: "msg_1",
      model: "claude-x",
      content: "Running it.",
      reasoning: "plan",
      tool_calls: [{ id: "toolu_9", name: "bash", arguments: '{"command":"ls"}' }],
      finish_reason: "tool_calls",
      usage: { prompt_tokens: 111, completion_tokens: 5 },
    });
  });

  test("stop reasons: max_tokens → length, stop_sequence → stop with the sequence, end_turn → stop", () => {
    const answer = (stop_reason: string, stop_sequence: string | null = null) =>
      pivotFromAnthropic({ content: [{ type: "text", text: "x" }], stop_reason, stop_sequence }, "m");
    expect(answer("max_tokens").finish_reason).toBe("length");
    expect(answer("stop_sequence", "END")).toMatchObject({ finish_reason: "stop", stop_sequence: "END" });
    expect(answer("end_turn")).toMatchObject({ finish_reason: "stop", usage: { prompt_tokens: 0, completion_tokens: 0 } });
    expect(answer("end_turn")).not.toHaveProperty("stop_sequence");
  });
});
