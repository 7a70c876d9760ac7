// Why: backend tests share a few fixtures — a port nobody listens on, the shell tool the mock
// engine's script calls, and a tool loop that feeds each answer back as the next request.
import type { PivotMessage, PivotRequest, PivotResponse } from "../../../node/gateway/pivot.ts";
import type { Backend, EngineResult } from "../../../node/gateway/backends/backend.ts";

/** A 127.0.0.1 URL whose port was bound and released: connecting is refused. */
export function refusedUrl(): string {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  const url = `http://127.0.0.1:${server.port}`;
  server.stop(true);
  return url;
}

export const BASH_TOOL = {
  name: "bash",
  description: "Run a shell command",
  parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
};

export function chatRequest(messages: PivotMessage[], overrides: Partial<PivotRequest> = {}): PivotRequest {
  return { model: "Qwen/Qwen3-8B", messages, tools: [BASH_TOOL], sampling: { max_tokens: 256, seed: 1 }, stream: false, ...overrides };
}

export function call(backend: Backend, request: PivotRequest, sessionId = "s1"): Promise<EngineResult> {
  return backend.complete({ request, sessionId, signal: new AbortController().signal });
}

/**
 * The assistant message a client sends back for an answer: verbatim, or with its content trimmed
 * as many harnesses do (a whitespace-only content before a tool call becomes "").
 */
export function assistantMessage(response: PivotResponse, trimContent = false): PivotMessage {
  return {
    role: "assistant",
    content: trimContent ? response.content.trim() : response.content,
    ...(response.reasoning !== undefined && { reasoning: response.reasoning }),
    ...(response.tool_calls.length > 0 && { tool_calls: response.tool_calls }),
  };
}

/** Next history after an answer: tool results for its calls, or a new user message. */
export function continueConversation(messages: PivotMessage[], response: PivotResponse, nextUser: string, trimContent = false): PivotMessage[] {
  const next = [...messages, assistantMessage(response, trimContent)];
  if (response.tool_calls.length === 0) return [...next, { role: "user", content: nextUser }];
  return [...next, ...response.tool_calls.map((c) => ({ role: "tool" as const, content: "ok", tool_call_id: c.id, name: c.name }))];
}
