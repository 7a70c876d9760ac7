// Why: the chat view of a trace — the conversation as OpenAI chat `messages` + `tools` — is built
// from the gateway's recorded calls: the last call's request plus its answer, with each earlier
// assistant turn replaced by the answer the model really gave on that call (harnesses often drop
// reasoning or re-serialise tool arguments when they send history back). Calls are grouped into
// threads by the token traces when the backend returned token ids, else by message prefixes
// (a call continues the thread whose last conversation its messages start with).
import type { RecordedCall } from "../../protocol/calls.ts";
import type { Message, ChatResponse, Tool } from "../../protocol/chat.ts";
import type { ChatMessage, ChatTool } from "../../protocol/generate.ts";
import { toOpenAiMessages } from "../gateway/backends/openai-chat.ts";

/** A call that was answered. */
export type AnsweredCall = RecordedCall & { response: ChatResponse };

export function answered(calls: readonly RecordedCall[]): AnsweredCall[] {
  return calls.filter((c): c is AnsweredCall => c.error === null && c.response !== null).sort((a, b) => a.seq - b.seq);
}

function responseMessage(response: ChatResponse): Message {
  return {
    role: "assistant",
    content: response.content,
    ...(response.reasoning !== undefined && { reasoning: response.reasoning }),
    ...(response.tool_calls.length > 0 && { tool_calls: response.tool_calls }),
  };
}

/**
 * The same turn as far as threading goes: role and trimmed text, or for an assistant turn with
 * tool calls the same tools in order (dialects rename call ids and harnesses re-serialise
 * arguments, so neither is compared).
 */
function sameTurn(a: Message, b: Message): boolean {
  if (a.role !== b.role) return false;
  const names = (m: Message) => (m.tool_calls ?? []).map((c) => c.name).join("\n");
  if (a.role === "assistant" && (a.tool_calls?.length ?? 0) + (b.tool_calls?.length ?? 0) > 0) return names(a) === names(b);
  return a.content.trim() === b.content.trim();
}

/** The turn as sampled (text, reasoning, arguments) under the ids the harness sent back. */
function asSampled(sent: Message, response: ChatResponse): Message {
  const sampled = responseMessage(response);
  if (!sent.tool_calls || !sampled.tool_calls) return sampled;
  return { ...sampled, tool_calls: sampled.tool_calls.map((c, i) => ({ ...c, id: sent.tool_calls![i]?.id ?? c.id })) };
}

function conversationOf(call: AnsweredCall): Message[] {
  return [...call.request.messages, responseMessage(call.response)];
}

/** Calls grouped by message prefix, in order of their first call. */
export function threadsByPrefix(calls: readonly AnsweredCall[]): AnsweredCall[][] {
  const threads: AnsweredCall[][] = [];
  for (const call of calls) {
    const thread = threads.findLast((t) => {
      const before = conversationOf(t[t.length - 1]!);
      const now = call.request.messages;
      return now.length >= before.length && before.every((m, i) => sameTurn(m, now[i]!));
    });
    if (thread) thread.push(call);
    else threads.push([call]);
  }
  return threads;
}

/** The conversation of a thread as OpenAI chat messages, each assistant turn as the model gave it. */
export function threadMessages(thread: readonly AnsweredCall[]): ChatMessage[] {
  const last = thread[thread.length - 1]!;
  const messages = [...last.request.messages];
  // Earlier assistant turns of this thread, in order, are the answers of the earlier calls.
  const assistantAt = messages.flatMap((m, i) => (m.role === "assistant" ? [i] : []));
  const earlier = thread.slice(0, -1);
  if (assistantAt.length === earlier.length) {
    earlier.forEach((call, k) => {
      const sent = messages[assistantAt[k]!]!;
      if (sameTurn(sent, responseMessage(call.response))) messages[assistantAt[k]!] = asSampled(sent, call.response);
    });
  }
  messages.push(responseMessage(last.response));
  return toOpenAiMessages(messages, "reasoning_content") as ChatMessage[];
}

export function chatTools(tools: readonly Tool[]): ChatTool[] {
  return tools.map((t) => ({
    type: "function",
    function: { name: t.name, ...(t.description !== undefined && { description: t.description }), parameters: t.parameters },
  }));
}
