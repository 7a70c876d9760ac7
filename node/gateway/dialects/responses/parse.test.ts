// Responses request shapes observed from real harnesses (see /work/shared/harnesses.md): codex's
// developer items, namespace/custom/web_search/tool_search tools, echoed function calls and
// reasoning items; qwen's instructions + max_output_tokens; pi's system input message.
import { describe, expect, test } from "bun:test";
import { PolarError } from "../../../../protocol/errors.ts";
import type { PivotResponse } from "../../pivot.ts";
import { responsesDialect } from "./index.ts";

const CODEX_TOOLS = [
  {
    type: "function",
    name: "exec_command",
    description: "Runs a command",
    strict: false,
    parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
  },
  {
    type: "namespace",
    name: "multi_agent_v1",
    description: "Sub-agents",
    tools: [
      { type: "function", name: "spawn_agent", strict: false, parameters: { type: "object", properties: { task: { type: "string" } } } },
      { type: "function", name: "wait", strict: false },
    ],
  },
  { type: "web_search", external_web_access: false },
  { type: "custom", name: "apply_patch", format: { type: "grammar", syntax: "lark", definition: "start: x" } },
  { type: "tool_search", execution: "client" },
  { type: "some_future_tool", anything: [1, 2] },
];

/** codex turn 2 (fake-model): developer items, environment context, prompt, echoed reasoning + call + output. */
const CODEX_TURN_2 = {
  model: "fake-model",
  stream: true,
  instructions: null,
  input: [
    { type: "message", role: "developer", content: [{ type: "input_text", text: "You are Codex." }] },
    { type: "message", role: "developer", content: [{ type: "input_text", text: "Skills and permissions." }] },
    { type: "message", role: "user", content: [{ type: "input_text", text: "<environment_context>…</environment_context>" }] },
    { type: "message", role: "user", content: [{ type: "input_text", text: "Create out.txt" }] },
    {
      type: "reasoning",
      summary: [{ type: "summary_text", text: "Use the shell." }],
      content: null,
      encrypted_content: "gAAAA-opaque",
    },
    {
      type: "function_call",
      id: "fc_1",
      call_id: "call_1",
      name: "exec_command",
      arguments: '{"cmd":"echo hello > out.txt"}',
      status: "completed",
    },
    {
      type: "function_call",
      call_id: "call_2",
      name: "spawn_agent",
      namespace: "multi_agent_v1",
      arguments: '{"task":"review"}',
    },
    { type: "function_call_output", call_id: "call_1", output: "Process exited with code 0\nOutput:\n" },
    { type: "function_call_output", call_id: "call_2", output: [{ type: "input_text", text: "agent started" }] },
  ],
  tools: CODEX_TOOLS,
  tool_choice: "auto",
  parallel_tool_calls: true,
  reasoning: { summary: "auto" },
  store: false,
  include: ["reasoning.encrypted_content"],
  prompt_cache_key: "0199-session",
  client_metadata: { session: "x" },
  text: { verbosity: "low" },
};

describe("responses parseRequest", () => {
  test("codex turn 2 folds items into chat turns and flattens tools", () => {
    const pivot = responsesDialect.parseRequest(CODEX_TURN_2);
    expect(pivot).toEqual({
      model: "fake-model",
      messages: [
        { role: "system", content: "You are Codex." },
        { role: "system", content: "Skills and permissions." },
        { role: "user", content: "<environment_context>…</environment_context>" },
        { role: "user", content: "Create out.txt" },
        {
          role: "assistant",
          content: "",
          reasoning: "Use the shell.",
          tool_calls: [
            { id: "call_1", name: "exec_command", arguments: '{"cmd":"echo hello > out.txt"}' },
            { id: "call_2", name: "multi_agent_v1__spawn_agent", arguments: '{"task":"review"}' },
          ],
        },
        { role: "tool", content: "Process exited with code 0\nOutput:\n", tool_call_id: "call_1", name: "exec_command" },
        { role: "tool", content: "agent started", tool_call_id: "call_2", name: "multi_agent_v1__spawn_agent" },
      ],
      tools: [
        {
          name: "exec_command",
          description: "Runs a command",
          parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
        },
        { name: "multi_agent_v1__spawn_agent", parameters: { type: "object", properties: { task: { type: "string" } } } },
        { name: "multi_agent_v1__wait", parameters: { type: "object", properties: {} } },
      ],
      tool_choice: "auto",
      sampling: {},
      stream: true,
      render_hints: {
        tool_namespaces: {
          multi_agent_v1__spawn_agent: { namespace: "multi_agent_v1", name: "spawn_agent" },
          multi_agent_v1__wait: { namespace: "multi_agent_v1", name: "wait" },
        },
      },
    });
    expect(pivot.thinking).toBeUndefined();
  });

  test("qwen: instructions become the first system message; max_output_tokens; string input", () => {
    const pivot = responsesDialect.parseRequest({
      model: "fake-model",
      instructions: "You are Qwen Code.",
      input: "hello",
      max_output_tokens: 32000,
      prompt_cache_key: "qwen-code:1",
      store: false,
      tool_choice: "auto",
      parallel_tool_calls: true,
    });
    expect(pivot.messages).toEqual([
      { role: "system", content: "You are Qwen Code." },
      { role: "user", content: "hello" },
    ]);
    expect(pivot.sampling).toEqual({ max_tokens: 32000 });
  });

  test("pi: a system input message without `type`, assistant output_text echoed back", () => {
    const pivot = responsesDialect.parseRequest({
      model: "m",
      input: [
        { role: "system", content: "You are pi." },
        { role: "user", content: [{ type: "input_text", text: "go" }] },
        { type: "message", role: "assistant", id: "msg_1", status: "completed", content: [{ type: "output_text", text: "ok", annotations: [] }] },
        {
          role: "user",
          content: [
            { type: "input_image", image_url: "data:," },
            { type: "input_text", text: "and this?" },
          ],
        },
      ],
    });
    expect(pivot.messages).toEqual([
      { role: "system", content: "You are pi." },
      { role: "user", content: "go" },
      { role: "assistant", content: "ok" },
      { role: "user", content: "and this?" },
    ]);
  });

  test("reasoning attaches to the next assistant message, which then takes the following calls", () => {
    const pivot = responsesDialect.parseRequest({
      model: "m",
      input: [
        { role: "user", content: "q" },
        { type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "full thought" }] },
        { role: "assistant", content: [{ type: "output_text", text: "Let me check." }] },
        { type: "function_call", call_id: "c1", name: "exec_command", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: "ok" },
        { type: "reasoning", summary: [{ type: "summary_text", text: "second" }] },
        { role: "assistant", content: "Done." },
      ],
    });
    expect(pivot.messages).toEqual([
      { role: "user", content: "q" },
      {
        role: "assistant",
        content: "Let me check.",
        reasoning: "full thought",
        tool_calls: [{ id: "c1", name: "exec_command", arguments: "{}" }],
      },
      { role: "tool", content: "ok", tool_call_id: "c1", name: "exec_command" },
      { role: "assistant", content: "Done.", reasoning: "second" },
    ]);
  });

  test("reasoning effort: none/minimal → thinking off, low and above → on", () => {
    const base = { model: "m", input: "hi" };
    expect(responsesDialect.parseRequest({ ...base, reasoning: { effort: "none" } }).thinking).toBe(false);
    expect(responsesDialect.parseRequest({ ...base, reasoning: { effort: "minimal" } }).thinking).toBe(false);
    expect(responsesDialect.parseRequest({ ...base, reasoning: { effort: "medium" } }).thinking).toBe(true);
    expect(responsesDialect.parseRequest({ ...base, reasoning: { effort: "xhigh" } }).thinking).toBe(true);
    expect(responsesDialect.parseRequest({ ...base, reasoning: { summary: "auto" } }).thinking).toBeUndefined();
  });

  test("a forced function tool_choice maps; hosted tool choices mean auto", () => {
    const base = { model: "m", input: "hi" };
    expect(responsesDialect.parseRequest({ ...base, tool_choice: { type: "function", name: "exec_command" } }).tool_choice).toEqual({
      name: "exec_command",
    });
    expect(responsesDialect.parseRequest({ ...base, tool_choice: { type: "web_search" } }).tool_choice).toBeUndefined();
  });

  test.each([
    [{ input: "x" }, /model/],
    [{ model: "m" }, /input/],
    [{ model: "m", input: [{ role: "narrator", content: "x" }] }, /input\.0\.role/],
    [{ model: "m", input: [{ type: "function_call", call_id: "c", name: "n" }] }, /input\.0\.arguments/],
    [{ model: "m", input: [{ type: "function_call_output", call_id: "c", output: 3 }] }, /input\.0\.output/],
    [{ model: "m", input: "x", tools: [{ type: "function", parameters: {} }] }, /tools\.0\.name/],
    [{ model: "m", input: "x", max_output_tokens: -1 }, /max_output_tokens/],
  ])("bad body %j → bad_request naming the field", (body, field) => {
    let caught: unknown;
    try {
      responsesDialect.parseRequest(body);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PolarError);
    expect((caught as PolarError).code).toBe("bad_request");
    expect((caught as PolarError).message).toMatch(field);
  });
});

describe("responses render", () => {
  const request = responsesDialect.parseRequest(CODEX_TURN_2);
  const response: PivotResponse = {
    id: "r1",
    model: "fake-model",
    content: "",
    reasoning: "think",
    tool_calls: [{ id: "call_9", name: "multi_agent_v1__wait", arguments: "{}" }],
    finish_reason: "tool_calls",
    usage: { prompt_tokens: 10, completion_tokens: 2 },
  };

  test("output: reasoning item, no empty message, function_call routed back to its namespace", () => {
    const body = responsesDialect.renderResponse(response, request) as { output: unknown[]; status: string };
    expect(body.status).toBe("completed");
    expect(body.output).toEqual([
      { type: "reasoning", id: "rs_r1", summary: [{ type: "summary_text", text: "think" }] },
      {
        type: "function_call",
        id: "fc_r1_0",
        call_id: "call_9",
        name: "wait",
        namespace: "multi_agent_v1",
        arguments: "{}",
        status: "completed",
      },
    ]);
  });

  test("whitespace-only text beside a call gets no message item; beside nothing it does", () => {
    const spaced = { ...response, content: "\n\n" };
    const withCall = responsesDialect.renderResponse(spaced, request) as { output: { type: string }[] };
    expect(withCall.output.map((item) => item.type)).toEqual(["reasoning", "function_call"]);
    const alone = responsesDialect.renderResponse({ ...spaced, tool_calls: [], finish_reason: "stop" }, request) as {
      output: { type: string }[];
    };
    expect(alone.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
  });

  test("the echoed call parses back to the name the model saw", () => {
    const body = responsesDialect.renderResponse(response, request) as { output: Record<string, unknown>[] };
    const next = responsesDialect.parseRequest({ ...CODEX_TURN_2, input: [{ role: "user", content: "q" }, ...body.output] });
    expect(next.messages[1]).toEqual({
      role: "assistant",
      content: "",
      reasoning: "think",
      tool_calls: [{ id: "call_9", name: "multi_agent_v1__wait", arguments: "{}" }],
    });
  });

  test("stream frames have event lines matching `type` and sequence numbers from 0", () => {
    const frames = responsesDialect.renderStream(response, request);
    const parsed = frames.map((frame) => {
      const match = /^event: (.+)\ndata: (.+)\n\n$/.exec(frame);
      if (!match) throw new Error(`malformed frame ${frame}`);
      return { event: match[1], data: JSON.parse(match[2] ?? "") };
    });
    expect(parsed.every(({ event, data }) => event === data.type)).toBe(true);
    expect(parsed.map(({ data }) => data.sequence_number)).toEqual(parsed.map((_, index) => index));
    expect(parsed.map(({ event }) => event)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.reasoning_summary_part.added",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.done",
      "response.reasoning_summary_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
  });
});
