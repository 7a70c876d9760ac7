import { describe, expect, test } from "bun:test";
import { parseQwen3Output } from "./qwen3-output.ts";

const ids = (i: number) => `call_${i}`;

describe("parseQwen3Output (vLLM qwen3 reasoning + hermes tool parsers)", () => {
  test("plain text is content", () => {
    expect(parseQwen3Output("Hello there.", { makeToolCallId: ids })).toEqual({ content: "Hello there.", toolCalls: [] });
  });

  test("reasoning then content, whitespace kept as vLLM does", () => {
    const out = parseQwen3Output("<think>\nLet me think.\n</think>\n\nThe answer is 4.");
    expect(out.reasoning).toBe("\nLet me think.\n");
    expect(out.content).toBe("\n\nThe answer is 4.");
  });

  test("</think> without <think> (template opened it) still splits", () => {
    const out = parseQwen3Output("reasoning here</think>answer");
    expect(out).toEqual({ reasoning: "reasoning here", content: "answer", toolCalls: [] });
  });

  test("truncated thinking: no </think> → everything after <think> is content", () => {
    expect(parseQwen3Output("<think>\nstill thinking")).toEqual({ content: "\nstill thinking", toolCalls: [] });
  });

  test("tool calls are parsed and arguments re-serialised like Python json.dumps", () => {
    const text =
      '<think>\nrun it\n</think>\n\n<tool_call>\n{"name": "bash", "arguments": {"command":"ls -la","n":[1,2]}}\n</tool_call>\n' +
      '<tool_call>\n{"name": "read_file", "arguments": {"path": "é.txt"}}\n</tool_call>';
    const out = parseQwen3Output(text, { makeToolCallId: ids });
    expect(out.reasoning).toBe("\nrun it\n");
    expect(out.content).toBe("\n\n");
    expect(out.toolCalls).toEqual([
      { id: "call_0", name: "bash", arguments: '{"command": "ls -la", "n": [1, 2]}' },
      { id: "call_1", name: "read_file", arguments: '{"path": "é.txt"}' },
    ]);
    expect(out.toolParseError).toBeUndefined();
  });

  test("an unterminated final tool call is still parsed (hermes regex)", () => {
    const out = parseQwen3Output('ok <tool_call>\n{"name": "bash", "arguments": {"command": "pwd"}}', { makeToolCallId: ids });
    expect(out.content).toBe("ok ");
    expect(out.toolCalls).toEqual([{ id: "call_0", name: "bash", arguments: '{"command": "pwd"}' }]);
  });

  test("a malformed tool call stays in content and is reported", () => {
    const text = 'before <tool_call>\n{"name": "bash", "arguments": {oops}\n</tool_call>';
    const out = parseQwen3Output(text, { makeToolCallId: ids });
    expect(out.toolCalls).toEqual([]);
    expect(out.content).toBe(text);
    expect(out.toolParseError).toContain("malformed tool call");
  });

  test("tool parsing can be disabled (request offered no tools)", () => {
    const text = '<tool_call>\n{"name": "bash", "arguments": {}}\n</tool_call>';
    expect(parseQwen3Output(text, { parseToolCalls: false })).toEqual({ content: text, toolCalls: [] });
  });
});
