import { describe, expect, test } from "bun:test";
import { PolarError } from "../../../../protocol/errors.ts";
import { parseCountTokensRequest, parseMessagesRequest } from "./request.ts";

const BASH_SCHEMA = {
  type: "object",
  properties: { command: { type: "string" }, description: { type: "string" } },
  required: ["command"],
};

/** Claude Code 2.1.x, turn 2, as captured in harnesses.md §2 (texts shortened). */
function claudeCodeTurn2(): Record<string, unknown> {
  return {
    model: "fake-model",
    max_tokens: 32000,
    stream: true,
    system: [
      { type: "text", text: "x-anthropic-billing-header: cc_version=2.1.332.fa9; cc_entrypoint=sdk-cli;" },
      { type: "text", text: "You are a Claude agent, built on Anthropic's Claude Agent SDK." },
      { type: "text", text: "MAIN PROMPT", cache_control: { type: "ephemeral" } },
    ],
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "<system-reminder>attribution</system-reminder>" },
          { type: "text", text: "Create a file out.txt containing hello using the shell." },
        ],
      },
      { role: "system", content: "ENVIRONMENT AND SKILLS" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "I should run echo.", signature: "c2ln" },
          { type: "redacted_thinking", data: "opaque" },
          { type: "tool_use", id: "toolu_01", name: "Bash", input: { command: "echo hello > out.txt", description: "write" } },
        ],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_01",
            content: "(Bash completed with no output)",
            is_error: false,
            cache_control: { type: "ephemeral" },
          },
        ],
      },
    ],
    tools: [
      { name: "Bash", description: "Run a command", input_schema: BASH_SCHEMA },
      { name: "DeferredToolPlaceholder", description: "later", input_schema: { type: "object" }, defer_loading: true },
      { type: "web_search_20250305", name: "web_search", max_uses: 5 },
      { type: "bash_20250124", name: "bash" },
    ],
    metadata: { user_id: JSON.stringify({ device_id: "d", account_uuid: "", session_id: "s" }) },
    thinking: { type: "adaptive", display: "omitted" },
    context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
    output_config: { effort: "high" },
  };
}

function badRequest(body: unknown): PolarError {
  try {
    parseMessagesRequest(body);
  } catch (error) {
    if (error instanceof PolarError) return error;
    throw error;
  }
  throw new Error("expected a bad_request");
}

describe("parseMessagesRequest: Claude Code", () => {
  test("turn 2 maps to the pivot conversation in order", () => {
    const pivot = parseMessagesRequest(claudeCodeTurn2());
    expect(pivot.model).toBe("fake-model");
    expect(pivot.stream).toBe(true);
    expect(pivot.thinking).toBe(true);
    expect(pivot.sampling).toEqual({ max_tokens: 32000 });
    expect(pivot.messages).toEqual([
      {
        role: "system",
        content:
          "x-anthropic-billing-header: cc_version=2.1.332.fa9; cc_entrypoint=sdk-cli;\n" +
          "You are a Claude agent, built on Anthropic's Claude Agent SDK.\nMAIN PROMPT",
      },
      {
        role: "user",
        content: "<system-reminder>attribution</system-reminder>\nCreate a file out.txt containing hello using the shell.",
      },
      { role: "system", content: "ENVIRONMENT AND SKILLS" },
      {
        role: "assistant",
        content: "",
        reasoning: "I should run echo.",
        tool_calls: [{ id: "toolu_01", name: "Bash", arguments: '{"command":"echo hello > out.txt","description":"write"}' }],
      },
      { role: "tool", content: "(Bash completed with no output)", tool_call_id: "toolu_01", name: "Bash" },
    ]);
  });

  test("custom and defer_loading tools are kept, server tools dropped", () => {
    const pivot = parseMessagesRequest(claudeCodeTurn2());
    expect(pivot.tools).toEqual([
      { name: "Bash", description: "Run a command", parameters: BASH_SCHEMA },
      { name: "DeferredToolPlaceholder", description: "later", parameters: { type: "object" } },
    ]);
    expect(pivot.tool_choice).toBeUndefined();
  });

  test("a role:system message given as text blocks (turn 1) is joined", () => {
    const body = claudeCodeTurn2();
    body.messages = [
      { role: "user", content: "hi" },
      {
        role: "system",
        content: [
          { type: "text", text: "env" },
          { type: "text", text: "date", cache_control: { type: "ephemeral" } },
        ],
      },
    ];
    expect(parseMessagesRequest(body).messages.slice(1)).toEqual([
      { role: "user", content: "hi" },
      { role: "system", content: "env\ndate" },
    ]);
  });

  test("a server tool that carries an input_schema is kept", () => {
    const body = {
      ...claudeCodeTurn2(),
      tools: [
        { type: "custom", name: "t", input_schema: { type: "object" } },
        { type: "text_editor_20250728", name: "ed", input_schema: { type: "object" } },
      ],
    };
    expect(parseMessagesRequest(body).tools.map((tool) => tool.name)).toEqual(["t", "ed"]);
  });
});

describe("parseMessagesRequest: Qwen Code anthropic variant", () => {
  test("thinking enabled with budget_tokens == max_tokens and temperature", () => {
    const pivot = parseMessagesRequest({
      model: "fake-model",
      max_tokens: 32000,
      temperature: 1,
      thinking: { type: "enabled", budget_tokens: 32000 },
      stream: true,
      system: [
        { type: "text", text: "core", cache_control: { type: "ephemeral" } },
        { type: "text", text: "memory", cache_control: { type: "ephemeral" } },
      ],
      messages: [{ role: "user", content: [{ type: "text", text: "go" }] }],
      tools: [{ name: "run_shell_command", description: "shell", input_schema: BASH_SCHEMA }],
    });
    expect(pivot.thinking).toBe(true);
    expect(pivot.sampling).toEqual({ max_tokens: 32000, temperature: 1 });
    expect(pivot.messages).toEqual([
      { role: "system", content: "core\nmemory" },
      { role: "user", content: "go" },
    ]);
  });
});

describe("parseMessagesRequest: blocks", () => {
  const base = { model: "m", max_tokens: 100 };

  test("tool results come first, one per result, in order; user text after", () => {
    const pivot = parseMessagesRequest({
      ...base,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "note" },
            {
              type: "tool_result",
              tool_use_id: "a",
              content: [
                { type: "text", text: "one" },
                { type: "image", source: {} },
                { type: "text", text: "two" },
              ],
            },
            { type: "tool_result", tool_use_id: "b", content: "failed", is_error: true },
            { type: "tool_result", tool_use_id: "c" },
          ],
        },
      ],
    });
    expect(pivot.messages).toEqual([
      { role: "tool", content: "one\ntwo", tool_call_id: "a" },
      { role: "tool", content: "Error: failed", tool_call_id: "b" },
      { role: "tool", content: "", tool_call_id: "c" },
      { role: "user", content: "note" },
    ]);
  });

  test("images are dropped; an image-only user message stays as an empty turn", () => {
    const pivot = parseMessagesRequest({
      ...base,
      messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "AA==" } }] }],
    });
    expect(pivot.messages).toEqual([{ role: "user", content: "" }]);
  });

  test("assistant text and several tool calls", () => {
    const pivot = parseMessagesRequest({
      ...base,
      messages: [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Running." },
            { type: "tool_use", id: "t1", name: "a", input: {} },
            { type: "tool_use", id: "t2", name: "b", input: { n: [1, 2] } },
          ],
        },
      ],
    });
    expect(pivot.messages[1]).toEqual({
      role: "assistant",
      content: "Running.",
      tool_calls: [
        { id: "t1", name: "a", arguments: "{}" },
        { id: "t2", name: "b", arguments: '{"n":[1,2]}' },
      ],
    });
  });

  test("sampling, tool_choice and thinking variants", () => {
    const pivot = parseMessagesRequest({
      ...base,
      messages: [],
      top_p: 0.9,
      top_k: 20,
      stop_sequences: ["END"],
      tool_choice: { type: "tool", name: "Bash", disable_parallel_tool_use: true },
      thinking: { type: "disabled" },
    });
    expect(pivot.sampling).toEqual({ max_tokens: 100, top_p: 0.9, top_k: 20, stop: ["END"] });
    expect(pivot.tool_choice).toEqual({ name: "Bash" });
    expect(pivot.thinking).toBe(false);
    expect(pivot.stream).toBe(false);
    const choices = (["auto", "any", "none"] as const).map((type) => parseMessagesRequest({ ...base, messages: [], tool_choice: { type } }).tool_choice);
    expect(choices).toEqual(["auto", "required", "none"]);
    expect(parseMessagesRequest({ ...base, messages: [] }).thinking).toBeUndefined();
  });
});

describe("parseMessagesRequest: malformed bodies name the field", () => {
  const base = { model: "m", max_tokens: 100, messages: [{ role: "user", content: "hi" }] };

  test.each([
    ["max_tokens", { ...base, max_tokens: undefined }],
    ["model", { ...base, model: 3 }],
    ["messages.0.role", { ...base, messages: [{ role: "robot", content: "x" }] }],
    ["messages.0.content.0.text", { ...base, messages: [{ role: "user", content: [{ type: "text", text: 1 }] }] }],
    ["messages.0.content.0.name", { ...base, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "x", input: {} }] }] }],
    ["messages.0.content.0.tool_use_id", { ...base, messages: [{ role: "user", content: [{ type: "tool_result" }] }] }],
    ["messages.0.content.0.type", { ...base, messages: [{ role: "user", content: [{ text: "no type" }] }] }],
    ["system.0.text", { ...base, system: [{ type: "text" }] }],
    ["tools.0.input_schema", { ...base, tools: [{ name: "t" }] }],
    ["tool_choice.name", { ...base, tool_choice: { type: "tool" } }],
    ["thinking.type", { ...base, thinking: { type: "sometimes" } }],
  ])("%s", (field, body) => {
    const error = badRequest(body);
    expect(error.code).toBe("bad_request");
    expect(error.message.startsWith(`${field}: `)).toBe(true);
  });

  test("a non-object body", () => {
    expect(badRequest("nope").message.startsWith("body: ")).toBe(true);
  });
});

describe("parseCountTokensRequest", () => {
  test("accepts a body without max_tokens and never streams", () => {
    const pivot = parseCountTokensRequest({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true });
    expect(pivot.sampling).toEqual({});
    expect(pivot.stream).toBe(false);
    expect(pivot.messages).toEqual([{ role: "user", content: "hi" }]);
  });

  test("still rejects malformed messages", () => {
    expect(() => parseCountTokensRequest({ model: "m", messages: "hi" })).toThrow(PolarError);
  });
});
