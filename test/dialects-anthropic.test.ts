// End to end: the official `@anthropic-ai/sdk` → gateway (port 0) → backend → mock engine, a
// two-turn tool loop, once per backend configuration of test/helpers/backend-matrix.ts. (The
// SDK-against-the-dialect tests without a server are in node/gateway/dialects/anthropic/sdk.test.ts.)
import { afterEach, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { getTokenizer } from "../node/tokenizer/index.ts";
import { BACKEND_MATRIX, expectTokenFaithfulLoop, startMatrixStack, type BackendConfig } from "./helpers/backend-matrix.ts";
import type { Stack, StackOptions } from "./helpers/stack.ts";

const BASH_TOOL = {
  name: "Bash",
  description: "Run a shell command",
  input_schema: {
    type: "object" as const,
    properties: { command: { type: "string" }, description: { type: "string" } },
    required: ["command"],
  },
};

describe.each(BACKEND_MATRIX)("end to end through the gateway, $name backend", (config: BackendConfig) => {
  const stacks: { stop(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const stack of stacks.splice(0)) await stack.stop();
  });

  async function startSession(options: StackOptions = {}) {
    const stack = await startMatrixStack(config, options);
    stacks.push(stack);
    const session = await stack.session({ test: "anthropic-e2e" });
    return { stack, session };
  }

  /** Turn 1 asks for a file; the mock policy calls Bash; turn 2 sends the result and gets "Done.". */
  async function toolLoop(send: (params: Anthropic.MessageCreateParamsNonStreaming) => Promise<Anthropic.Message>) {
    const first: Anthropic.MessageParam = { role: "user", content: "Create a file out.txt containing hello using the shell." };
    const base = { model: "fake-model", max_tokens: 512, system: "You are a coding agent.", tools: [BASH_TOOL] };
    const turn1 = await send({ ...base, messages: [first] });
    expect(turn1.stop_reason).toBe("tool_use");
    const toolUse = turn1.content.find((block) => block.type === "tool_use");
    if (toolUse?.type !== "tool_use") throw new Error(`no tool_use in ${JSON.stringify(turn1.content)}`);
    expect(toolUse.name).toBe("Bash");
    expect(toolUse.id).toMatch(/^toolu_[A-Za-z0-9_-]+$/);
    expect((toolUse.input as { command?: string }).command).toBe("echo hello > out.txt");

    const turn2 = await send({
      ...base,
      messages: [
        first,
        { role: "assistant", content: turn1.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: toolUse.id, content: "(Bash completed with no output)" }] },
      ],
    });
    expect(turn2.stop_reason).toBe("end_turn");
    const texts = turn2.content.flatMap((block) => (block.type === "text" ? [block.text] : []));
    expect(texts.map((text) => text.trim())).toEqual(["Done."]);
    return toolUse.id;
  }

  async function expectRecorded(stack: Stack, sessionId: string, toolUseId: string, stream: boolean) {
    const calls = await stack.calls(sessionId);
    expect(calls.map((call) => [call.seq, call.dialect, call.request.stream, call.response?.finish_reason])).toEqual([
      [calls[0]?.seq, "anthropic", stream, "tool_calls"],
      [calls[1]?.seq, "anthropic", stream, "stop"],
    ]);
    expect(calls[1]?.request.messages.at(-1)).toEqual({
      role: "tool",
      content: "(Bash completed with no output)",
      tool_call_id: toolUseId,
      name: "Bash",
    });
    // The assistant turn Claude Code-style clients send back is the turn the engine produced…
    const answered = calls[0]?.response;
    const echoed = calls[1]?.request.messages.filter((message) => message.role === "assistant");
    expect(echoed).toEqual([
      {
        role: "assistant",
        content: answered?.content.trim() ? answered.content : "",
        ...(answered?.reasoning ? { reasoning: answered.reasoning } : {}),
        tool_calls: [{ id: toolUseId, name: "Bash", arguments: JSON.stringify(JSON.parse(answered?.tool_calls[0]?.arguments ?? "null")) }],
      },
    ]);
    // …so the second prompt extends the first prompt plus the sampled tokens (token-faithful history).
    await expectTokenFaithfulLoop(stack, config, calls);
  }

  test("non-streaming, key in x-api-key", async () => {
    const { stack, session } = await startSession();
    const client = new Anthropic({ apiKey: session.token, baseURL: stack.gateway.url, maxRetries: 0 });
    const toolUseId = await toolLoop((params) => client.messages.create(params));
    await expectRecorded(stack, session.id, toolUseId, false);
  });

  test("streaming like Claude Code: /s/<token> base URL, ?beta=true, finalMessage()", async () => {
    const { stack, session } = await startSession();
    const client = new Anthropic({ apiKey: "ignored-by-path-auth", baseURL: session.anthropic_base_url, maxRetries: 0 });
    const toolUseId = await toolLoop((params) =>
      client.messages.stream({ ...params, thinking: { type: "adaptive" } }, { query: { beta: "true" } }).finalMessage(),
    );
    await expectRecorded(stack, session.id, toolUseId, true);
  });

  test("a Claude Code-shaped streamed request (raw HTTP, its headers and extra fields)", async () => {
    const { stack, session } = await startSession();
    const body = {
      model: "fake-model",
      max_tokens: 32000,
      stream: true,
      system: [
        { type: "text", text: "x-anthropic-billing-header: cc_version=2.1.332.fa9; cc_entrypoint=sdk-cli;" },
        { type: "text", text: "You are a Claude agent, built on Anthropic's Claude Agent SDK." },
        { type: "text", text: "Main prompt.", cache_control: { type: "ephemeral" } },
      ],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "<system-reminder>attribution</system-reminder>" },
            { type: "text", text: "Create out.txt with hello." },
          ],
        },
        { role: "system", content: [{ type: "text", text: "Environment: linux." }] },
      ],
      tools: [
        BASH_TOOL,
        { name: "DeferredToolPlaceholder", description: "d", input_schema: { type: "object" }, defer_loading: true },
        { type: "web_search_20250305", name: "web_search" },
      ],
      metadata: { user_id: JSON.stringify({ device_id: "d", account_uuid: "", session_id: "s" }) },
      thinking: { type: "adaptive", display: "omitted" },
      context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
      output_config: { effort: "high" },
    };
    const res = await fetch(`${stack.gateway.url}/v1/messages?beta=true`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${session.token}`,
        "anthropic-version": "2023-06-01",
        "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27",
        "x-app": "cli",
      },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type") ?? "").toStartWith("text/event-stream");
    const events = (await res.text())
      .split("\n\n")
      .filter((frame) => frame.includes("data: "))
      .map(
        (frame) =>
          JSON.parse(frame.slice(frame.indexOf("data: ") + 6)) as {
            type: string;
            content_block?: { type: string; name?: string };
            delta?: { partial_json?: string; stop_reason?: string };
          },
      );
    expect(events[0]?.type).toBe("message_start");
    expect(events.at(-1)?.type).toBe("message_stop");
    const toolStart = events.find((event) => event.content_block?.type === "tool_use");
    expect(toolStart?.content_block?.name).toBe("Bash");
    const json = events.flatMap((event) => (event.delta?.partial_json !== undefined ? [event.delta.partial_json] : [])).join("");
    expect(JSON.parse(json).command).toBe("echo hello > out.txt");
    expect(events.find((event) => event.type === "message_delta")?.delta?.stop_reason).toBe("tool_use");
    const [call] = await stack.calls(session.id);
    expect(call?.request.messages.map((message) => message.role)).toEqual(["system", "user", "system"]);
    expect(call?.request.tools.map((tool) => tool.name)).toEqual(["Bash", "DeferredToolPlaceholder"]);
    expect(call?.request.thinking).toBe(true);
  });

  /** The stop string ends the sampled text mid-sentence; the engine reports which one matched. */
  const STOP_SCRIPT = { steps: [{ text: "Alpha beta. STOP gamma delta." }] };

  async function expectStopSequenceCall(stack: Stack, sessionId: string, stream: boolean) {
    const [call] = await stack.calls(sessionId);
    expect(call?.request.stream).toBe(stream);
    expect(call?.request.sampling.stop).toEqual(["never-there", "STOP"]);
    expect(call?.response?.finish_reason).toBe("stop");
    expect(call?.response?.stop_sequence).toBe("STOP");
    // The token that completed "STOP" was sampled, so it is recorded; nothing after it, no EOS.
    const sampled = getTokenizer().decode(call?.output_ids ?? []);
    expect(sampled).toContain("STOP");
    expect(sampled).not.toContain("gamma");
    expect(call?.logprobs).toHaveLength(call?.output_ids?.length ?? -1);
  }

  test("stop_sequences: stop_reason stop_sequence end to end, non-streaming", async () => {
    const { stack, session } = await startSession({ engine: { script: STOP_SCRIPT } });
    const client = new Anthropic({ apiKey: session.token, baseURL: stack.gateway.url, maxRetries: 0 });
    const message = await client.messages.create({
      model: "fake-model",
      max_tokens: 256,
      messages: [{ role: "user", content: "Say something." }],
      stop_sequences: ["never-there", "STOP"],
    });
    expect(message.stop_reason).toBe("stop_sequence");
    expect(message.stop_sequence).toBe("STOP");
    const texts = message.content.flatMap((block) => (block.type === "text" ? [block.text.trim()] : []));
    expect(texts).toEqual(["Alpha beta."]);
    await expectStopSequenceCall(stack, session.id, false);
  });

  test("stop_sequences: stop_reason stop_sequence end to end, streamed to finalMessage()", async () => {
    const { stack, session } = await startSession({ engine: { script: STOP_SCRIPT } });
    const client = new Anthropic({ apiKey: "ignored-by-path-auth", baseURL: session.anthropic_base_url, maxRetries: 0 });
    const message = await client.messages
      .stream({ model: "fake-model", max_tokens: 256, messages: [{ role: "user", content: "Say something." }], stop_sequences: ["never-there", "STOP"] })
      .finalMessage();
    expect([message.stop_reason, message.stop_sequence]).toEqual(["stop_sequence", "STOP"]);
    expect(message.content.flatMap((block) => (block.type === "text" ? [block.text.trim()] : []))).toEqual(["Alpha beta."]);
    await expectStopSequenceCall(stack, session.id, true);
  });

  test("count_tokens through the SDK", async () => {
    const { stack, session } = await startSession();
    const client = new Anthropic({ apiKey: session.token, baseURL: stack.gateway.url, maxRetries: 0 });
    const counted = await client.messages.countTokens({ model: "fake-model", messages: [{ role: "user", content: "Hello there" }] });
    expect(counted.input_tokens).toBeGreaterThan(0);
  });
});
