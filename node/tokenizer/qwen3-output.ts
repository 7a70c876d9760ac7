// Why: turns sampled Qwen3 text into content / reasoning / tool calls the way vLLM's `qwen3`
// reasoning parser and `hermes` tool parser do, so the mock engine answers like vLLM and the
// gateway's `tito` backend (which samples raw tokens) returns the same parsed response.
import { pythonJsonDumps } from "./python-json.ts";

export const THINK_START = "<think>";
export const THINK_END = "</think>";
export const TOOL_CALL_START = "<tool_call>";
export const TOOL_CALL_END = "</tool_call>";

export interface ParsedToolCall {
  id: string;
  name: string;
  /** JSON text, re-serialised like vLLM (json.dumps, ensure_ascii=False). */
  arguments: string;
}

export interface Qwen3Output {
  /** Text outside reasoning and tool calls; "" when vLLM would return null. */
  content: string;
  /** Text inside `<think>…</think>`; absent when the output holds no `</think>`. */
  reasoning?: string;
  toolCalls: ParsedToolCall[];
  /** Set when a `<tool_call>` block could not be parsed; its text then stays in `content`. */
  toolParseError?: string;
}

export interface Qwen3ParseOptions {
  /** Run the tool-call parser (vLLM does when the request offers tools and tool_choice != none). */
  parseToolCalls?: boolean;
  /** Id for the i-th tool call; default `chatcmpl-tool-<random hex>` like vLLM. */
  makeToolCallId?: (index: number) => string;
}

/** Reasoning split: an optional leading `<think>` is dropped; `</think>` separates reasoning. */
export function splitReasoning(text: string): { reasoning?: string; content: string } {
  const startAt = text.indexOf(THINK_START);
  const afterStart = startAt === -1 ? text : text.slice(startAt + THINK_START.length);
  const endAt = afterStart.indexOf(THINK_END);
  if (endAt === -1) return { content: afterStart };
  return { reasoning: afterStart.slice(0, endAt), content: afterStart.slice(endAt + THINK_END.length) };
}

const TOOL_CALL_BLOCK = /<tool_call>([\s\S]*?)<\/tool_call>|<tool_call>([\s\S]*)/g;

interface ToolCallJson {
  name: string;
  arguments: unknown;
}

function parseToolCallJson(raw: string): ToolCallJson {
  const value: unknown = JSON.parse(raw.trim());
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("not a JSON object");
  const { name, arguments: args } = value as Record<string, unknown>;
  if (typeof name !== "string") throw new Error('missing string "name"');
  return { name, arguments: args ?? {} };
}

/** Tool-call split (hermes): text before the first `<tool_call>` is content; each block is a call. */
export function splitToolCalls(
  text: string,
  makeToolCallId: (index: number) => string = defaultToolCallId,
): { content: string; toolCalls: ParsedToolCall[]; error?: string } {
  const firstAt = text.indexOf(TOOL_CALL_START);
  if (firstAt === -1) return { content: text, toolCalls: [] };
  const toolCalls: ParsedToolCall[] = [];
  try {
    for (const match of text.matchAll(TOOL_CALL_BLOCK)) {
      const call = parseToolCallJson(match[1] ?? match[2] ?? "");
      toolCalls.push({ id: makeToolCallId(toolCalls.length), name: call.name, arguments: pythonJsonDumps(call.arguments) });
    }
  } catch (err) {
    // vLLM logs "Error in extracting tool call from response." and returns the whole text as content.
    return { content: text, toolCalls: [], error: `malformed tool call: ${(err as Error).message}` };
  }
  return { content: text.slice(0, firstAt), toolCalls };
}

/** Full parse of one sampled Qwen3 output text (special tokens already skipped). */
export function parseQwen3Output(text: string, options: Qwen3ParseOptions = {}): Qwen3Output {
  const { reasoning, content } = splitReasoning(text);
  const out: Qwen3Output = { content, toolCalls: [] };
  if (reasoning !== undefined) out.reasoning = reasoning;
  if (options.parseToolCalls ?? true) {
    const tools = splitToolCalls(content, options.makeToolCallId);
    out.content = tools.content;
    out.toolCalls = tools.toolCalls;
    if (tools.error !== undefined) out.toolParseError = tools.error;
  }
  return out;
}

function defaultToolCallId(): string {
  return `chatcmpl-tool-${crypto.randomUUID().replaceAll("-", "")}`;
}
