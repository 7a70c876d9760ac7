// End to end for the two OpenAI dialects: the official `openai` SDK → gateway (port 0) → backend
// → mock engine, the two-turn tool loop every harness runs (tool call, tool result, final text),
// streaming and not, for Chat Completions (Qwen/Pi shapes) and Responses (codex shapes) — once per
// backend configuration of test/helpers/backend-matrix.ts.
import { afterEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import type { RecordedCall } from "../protocol/calls.ts";
import { BACKEND_MATRIX, expectTokenFaithfulLoop, startMatrixStack, type BackendConfig } from "./helpers/backend-matrix.ts";
import { startStack, type Stack } from "./helpers/stack.ts";

/** Request params without `stream`: each test decides how it sends them. */
type ChatParams = Omit<OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming, "stream">;
type ResponsesParams = Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, "stream">;

const PROMPT = "Create a file out.txt containing hello using the shell.";

/** Qwen Code's shell tool, plus its parameter-less `get_goal`. */
const CHAT_TOOLS = [
  {
    type: "function" as const,
    function: {
      name: "run_shell_command",
      description: "Run a shell command",
      parameters: { type: "object", properties: { command: { type: "string" }, description: { type: "string" } }, required: ["command"] },
    },
  },
  { type: "function", function: { name: "get_goal", description: "Read the goal" } },
] as OpenAI.Chat.Completions.ChatCompletionTool[];

/** codex's tools: `exec_command {cmd}`, a namespace, and hosted tools Polar drops. */
const RESPONSES_TOOLS = [
  {
    type: "function",
    name: "exec_command",
    description: "Runs a command in a PTY",
    strict: false,
    parameters: { type: "object", properties: { cmd: { type: "string" }, yield_time_ms: { type: "number" } }, required: ["cmd"] },
  },
  {
    type: "namespace",
    name: "multi_agent_v1",
    description: "Sub-agents",
    tools: [{ type: "function", name: "spawn_agent", strict: false, parameters: { type: "object", properties: {} } }],
  },
  { type: "web_search" },
] as unknown as OpenAI.Responses.Tool[];

describe.each(BACKEND_MATRIX)("OpenAI dialects end to end through the gateway, $name backend", (config: BackendConfig) => {
  const stacks: { stop(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const stack of stacks.splice(0)) await stack.stop();
  });

  async function startSession() {
    const stack = await startMatrixStack(config);
    stacks.push(stack);
    const session = await stack.session({ test: "openai-e2e" });
    return { stack, session };
  }

  async function expectRecorded(stack: Stack, calls: RecordedCall[], dialect: RecordedCall["dialect"], stream: boolean): Promise<void> {
    expect(calls.map((call) => [call.dialect, call.request.stream, call.response?.finish_reason])).toEqual([
      [dialect, stream, "tool_calls"],
      [dialect, stream, "stop"],
    ]);
    expect(calls[1]?.request.messages.at(-1)?.role).toBe("tool");
    // The assistant turn the client sent back is the turn the engine produced (whitespace-only
    // text beside tool calls is shown as no text)…
    const answered = calls[0]?.response;
    const echoed = calls[1]?.request.messages.filter((message) => message.role === "assistant");
    const shown = answered?.content.trim() ? answered.content : "";
    expect(echoed).toEqual([{ role: "assistant", content: shown, reasoning: answered?.reasoning, tool_calls: answered?.tool_calls }]);
    // …so the second prompt extends the first prompt plus the sampled tokens (token-faithful history).
    await expectTokenFaithfulLoop(stack, config, calls);
  }

  /** Turn 1 gets a shell call; turn 2 sends its result (Qwen's array-of-parts shape) and gets "Done.". */
  async function chatToolLoop(send: (params: ChatParams) => Promise<OpenAI.Chat.Completions.ChatCompletion>) {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "system", content: "You are a coding agent." },
      { role: "user", content: [{ type: "text", text: PROMPT }] },
    ];
    const base = { model: "fake-model", max_completion_tokens: 512, tools: CHAT_TOOLS };
    const turn1 = await send({ ...base, messages });
    const choice1 = turn1.choices[0];
    expect(choice1?.finish_reason).toBe("tool_calls");
    const call = choice1?.message.tool_calls?.[0];
    if (call?.type !== "function") throw new Error(`no function call in ${JSON.stringify(choice1?.message)}`);
    expect(call.function.name).toBe("run_shell_command");
    expect(JSON.parse(call.function.arguments).command).toBe("echo hello > out.txt");

    const turn2 = await send({
      ...base,
      messages: [
        ...messages,
        // Echoed whole, reasoning included, so the engine sees the turn exactly as it sampled it.
        { ...choice1!.message, refusal: undefined } as OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam,
        { role: "tool", tool_call_id: call.id, content: [{ type: "text", text: "Command: echo hello > out.txt\nExit Code: 0" }] },
      ],
    });
    expect(turn2.choices[0]?.finish_reason).toBe("stop");
    // Qwen3 emits "\n\n" after an empty think block; vLLM keeps it in the content.
    expect(turn2.choices[0]?.message.content?.trim()).toBe("Done.");
    expect(turn2.usage?.prompt_tokens ?? 0).toBeGreaterThan(turn1.usage?.prompt_tokens ?? 0);
  }

  test("chat completions, non-streaming, key as Bearer on the gateway URL", async () => {
    const { stack, session } = await startSession();
    const client = new OpenAI({ apiKey: session.token, baseURL: `${stack.gateway.url}/v1`, maxRetries: 0 });
    await chatToolLoop((params) => client.chat.completions.create(params));
    await expectRecorded(stack, await stack.calls(session.id), "chat", false);
  });

  test("chat completions, streaming with include_usage (like Qwen Code and Pi), /s/<token> base URL", async () => {
    const { stack, session } = await startSession();
    const client = new OpenAI({ apiKey: "ignored-by-path-auth", baseURL: session.openai_base_url, maxRetries: 0 });
    await chatToolLoop(async (params) => {
      const runner = client.chat.completions.stream({ ...params, stream_options: { include_usage: true } });
      const final = await runner.finalChatCompletion();
      expect(final.usage?.completion_tokens ?? 0).toBeGreaterThan(0);
      return final;
    });
    await expectRecorded(stack, await stack.calls(session.id), "chat", true);
  });

  /** codex's loop: developer items, echoed output items, then function_call_output. */
  async function responsesToolLoop(send: (params: ResponsesParams) => Promise<OpenAI.Responses.Response>) {
    const input: OpenAI.Responses.ResponseInput = [
      { type: "message", role: "developer", content: [{ type: "input_text", text: "You are Codex." }] },
      { type: "message", role: "user", content: [{ type: "input_text", text: PROMPT }] },
    ];
    const base = {
      model: "fake-model",
      tools: RESPONSES_TOOLS,
      tool_choice: "auto" as const,
      parallel_tool_calls: true,
      reasoning: { summary: "auto" as const },
      store: false,
      include: ["reasoning.encrypted_content" as const],
      prompt_cache_key: "session-1",
    };
    const turn1 = await send({ ...base, input });
    expect(turn1.status).toBe("completed");
    const call = turn1.output.find((item) => item.type === "function_call");
    if (call?.type !== "function_call") throw new Error(`no function_call in ${JSON.stringify(turn1.output)}`);
    expect(call.name).toBe("exec_command");
    expect(call.namespace).toBeUndefined();
    expect(JSON.parse(call.arguments).cmd).toBe("echo hello > out.txt");

    const turn2 = await send({
      ...base,
      input: [
        ...input,
        ...(turn1.output as OpenAI.Responses.ResponseInputItem[]),
        { type: "function_call_output", call_id: call.call_id, output: "Process exited with code 0\nOutput:\n" },
      ],
    });
    expect(turn2.status).toBe("completed");
    expect(turn2.output_text.trim()).toBe("Done.");
    expect(turn2.output.filter((item) => item.type === "function_call")).toEqual([]);
    expect(turn2.usage?.input_tokens ?? 0).toBeGreaterThan(turn1.usage?.input_tokens ?? 0);
  }

  test("responses, non-streaming, key as Bearer on the gateway URL", async () => {
    const { stack, session } = await startSession();
    const client = new OpenAI({ apiKey: session.token, baseURL: `${stack.gateway.url}/v1`, maxRetries: 0 });
    await responsesToolLoop((params) => client.responses.create(params));
    await expectRecorded(stack, await stack.calls(session.id), "responses", false);
  });

  test("responses, streaming like codex: stream().finalResponse(), /s/<token> base URL", async () => {
    const { stack, session } = await startSession();
    const client = new OpenAI({ apiKey: "ignored-by-path-auth", baseURL: session.openai_base_url, maxRetries: 0 });
    await responsesToolLoop((params) => client.responses.stream(params).finalResponse());
    const calls = await stack.calls(session.id);
    await expectRecorded(stack, calls, "responses", true);
    expect(calls[0]?.request.tools.map((tool) => tool.name)).toEqual(["exec_command", "multi_agent_v1__spawn_agent"]);
  });
});

describe("OpenAI dialects: errors through the gateway", () => {
  const stacks: { stop(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const stack of stacks.splice(0)) await stack.stop();
  });

  async function startSession() {
    const stack = await startStack();
    stacks.push(stack);
    const session = await stack.session({ test: "openai-e2e-errors" });
    return { stack, session };
  }

  test("an unknown key is refused with the SDK's AuthenticationError", async () => {
    const { stack } = await startSession();
    const client = new OpenAI({ apiKey: "sk-not-a-session", baseURL: `${stack.gateway.url}/v1`, maxRetries: 0 });
    const error = await client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  test("a malformed body is a BadRequestError naming the field", async () => {
    const { stack, session } = await startSession();
    const client = new OpenAI({ apiKey: session.token, baseURL: `${stack.gateway.url}/v1`, maxRetries: 0 });
    const error = await client.responses
      .create({ model: "fake-model", input: [{ type: "function_call_output", call_id: "c1" }] } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(/input\.0\.output/);
  });
});
