// The chat view from recorded calls: a linear session is one thread whose assistant turns are
// the answers the model gave (reasoning kept, the harness's tool-call ids kept so results still
// pair); a sub-agent's calls and a compacted history start threads of their own.
import { describe, expect, test } from "bun:test";
import type { RecordedCall } from "../../protocol/calls.ts";
import type { ChatResponse, Message } from "../../protocol/chat.ts";
import { answered, chatTools, threadMessages, threadsByPrefix } from "./chat-view.ts";

const TOOLS = [{ name: "bash", description: "run", parameters: { type: "object", properties: { command: { type: "string" } } } }];

function reply(content: string, reasoning: string, command?: string, id = "call_1"): ChatResponse {
  return {
    id: `r-${content}`,
    model: "m",
    content,
    reasoning,
    tool_calls: command ? [{ id, name: "bash", arguments: JSON.stringify({ command }) }] : [],
    finish_reason: command ? "tool_calls" : "stop",
    usage: { prompt_tokens: 10, completion_tokens: 3 },
  };
}

function call(seq: number, messages: Message[], response: ChatResponse | null): RecordedCall {
  return {
    session_id: "s",
    seq,
    dialect: "anthropic",
    request: { model: "m", messages, tools: TOOLS, sampling: {}, stream: false },
    response,
    prompt_ids: null,
    output_ids: null,
    logprobs: null,
    engine_url: null,
    policy_version: 0,
    timings: { queued_ms: 0, engine_ms: 0, total_ms: 0 },
    error: null,
    notes: { text_only: true },
    started_at: "2026-01-01T00:00:00.000Z",
  };
}

const system: Message = { role: "system", content: "You are an agent." };
const task: Message = { role: "user", content: "Fix the bug." };
const r0 = reply("Looking.", "read first", "cat a.py");
const r1 = reply("Done.", "all good");
// What the harness sends back: its own id for the call (the dialect prefixed it), reasoning dropped, arguments re-serialised.
const sent0: Message = { role: "assistant", content: "Looking.", tool_calls: [{ id: "toolu_call_1", name: "bash", arguments: '{ "command": "cat a.py" }' }] };
const result0: Message = { role: "tool", content: "print(1)", tool_call_id: "toolu_call_1" };

describe("chat view", () => {
  test("a linear session: one thread, each assistant turn as sampled, under the harness's call id", () => {
    const calls = answered([call(1, [system, task, sent0, result0], r1), call(0, [system, task], r0), call(2, [system, task], null)]);
    expect(calls.map((c) => c.seq)).toEqual([0, 1]);
    const threads = threadsByPrefix(calls);
    expect(threads.map((t) => t.map((c) => c.seq))).toEqual([[0, 1]]);
    expect(threadMessages(threads[0]!)).toEqual([
      { role: "system", content: "You are an agent." },
      { role: "user", content: "Fix the bug." },
      {
        role: "assistant",
        content: "Looking.",
        reasoning_content: "read first",
        tool_calls: [{ id: "toolu_call_1", type: "function", function: { name: "bash", arguments: '{"command":"cat a.py"}' } }],
      },
      { role: "tool", content: "print(1)", tool_call_id: "toolu_call_1" },
      { role: "assistant", content: "Done.", reasoning_content: "all good" },
    ]);
    expect(chatTools(calls[0]!.request.tools)).toEqual([
      { type: "function", function: { name: "bash", description: "run", parameters: TOOLS[0]!.parameters } },
    ]);
  });

  test("a sub-agent's calls between the main agent's, and a compacted history, are threads of their own", () => {
    const sub: Message = { role: "user", content: "Sub-task: list the files." };
    const compacted: Message = { role: "user", content: "Summary of the work so far: a.py read." };
    const calls = answered([
      call(0, [system, task], r0),
      call(1, [system, sub], reply("Listing.", "", "ls", "call_9")),
      call(2, [system, task, sent0, result0], reply("More.", "", "cat b.py", "call_2")),
      call(3, [system, compacted], r1),
    ]);
    expect(threadsByPrefix(calls).map((t) => t.map((c) => c.seq))).toEqual([[0, 2], [1], [3]]);
  });
});
