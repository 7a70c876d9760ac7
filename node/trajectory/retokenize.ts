// Why: the lossy baseline the merge strategies are compared with — re-render the final
// conversation with the chat template, tokenize it, and train on the assistant spans. Each span
// takes logprobs only from the call that sampled that turn of that conversation (its request was
// the conversation up to the turn, its answer the turn), never from a call of another
// conversation whose turn reads the same; only tokens that line up with that call's sampled ids
// (common head and tail of the span) count as exactly sampled and carry a logprob.
import type { Message, ToolCall } from "../../protocol/chat.ts";
import { globalRegex } from "./normalisers.ts";
import { CHATML, singleTokenId, type TrajectoryTokenizer } from "./tokenizer-port.ts";
import { TraceBuilder } from "./trace-builder.ts";
import type { TokenCall } from "./usable-calls.ts";

function canonicalArguments(args: string): string {
  try {
    return JSON.stringify(JSON.parse(args));
  } catch {
    return args.trim();
  }
}

function toolCallsKey(toolCalls: readonly ToolCall[] | undefined): [string, string][] {
  return (toolCalls ?? []).map((tc) => [tc.name, canonicalArguments(tc.arguments)]);
}

/** What identifies a message of a conversation (reasoning aside: templates and harnesses drop it). */
function messageKeys(messages: readonly Message[], volatile: readonly RegExp[]): string[] {
  return messages.map((m) => {
    const content = volatile.reduce((text, re) => text.replace(re, ""), m.content).trim();
    return String(Bun.hash(JSON.stringify([m.role, content, toolCallsKey(m.tool_calls), m.tool_call_id ?? null])));
  });
}

/** Key of "this conversation so far, then this assistant turn". */
function samplingKey(historyKeys: readonly string[], turn: Pick<Message, "content" | "tool_calls">): string {
  return JSON.stringify([historyKeys, turn.content.trim(), toolCallsKey(turn.tool_calls)]);
}

/** The call that sampled each assistant turn at `turnIndexes` of `messages`, if any (each call once). */
function turnSources(calls: readonly TokenCall[], messages: readonly Message[], turnIndexes: readonly number[], volatile: readonly RegExp[]) {
  const bySampling = new Map<string, TokenCall[]>();
  for (const call of calls) {
    const key = samplingKey(messageKeys(call.request.messages, volatile), call.response);
    bySampling.set(key, [...(bySampling.get(key) ?? []), call]);
  }
  const keys = messageKeys(messages, volatile);
  // An identical request sent twice: the later call is the one whose answer the harness kept.
  return turnIndexes.map((m) => bySampling.get(samplingKey(keys.slice(0, m), messages[m]!))?.pop());
}

/** [start, end) of each assistant message body (header excluded, end marker included). */
function assistantSpans(ids: readonly number[], tokenizer: TrajectoryTokenizer): [number, number][] {
  const header = tokenizer.encode(CHATML.assistantHeader);
  const [startId, roleId, newlineId] = header;
  if (header.length !== 3) throw new Error(`expected the assistant header to be 3 tokens, got ${header.length}`);
  const endId = singleTokenId(tokenizer, CHATML.messageEnd);
  const spans: [number, number][] = [];
  for (let at = 0; at + 1 < ids.length; at++) {
    if (ids[at] !== startId || ids[at + 1] !== roleId) continue;
    // A body starting with newlines merges with the header's own ("\n" + "\n\n" is one token,
    // 1406 in Qwen3): that token opens the span; it is the re-rendered text, not a sampled id.
    const start = ids[at + 2] === newlineId ? at + 3 : at + 2;
    const marker = ids.indexOf(endId, start);
    spans.push([start, marker < 0 ? ids.length : marker + 1]);
  }
  return spans;
}

export function retokenizeTrace(calls: readonly TokenCall[], tokenizer: TrajectoryTokenizer, volatilePatterns: readonly (RegExp | string)[]): TraceBuilder[] {
  const last = calls.at(-1);
  if (!last) return [];
  const response = last.response;
  const messages: Message[] = [
    ...last.request.messages,
    { role: "assistant", content: response.content, reasoning: response.reasoning, tool_calls: response.tool_calls },
  ];
  const ids = tokenizer.encode(tokenizer.renderChat({ messages, tools: last.request.tools, thinking: last.request.thinking, addGenerationPrompt: false }));
  const spans = assistantSpans(ids, tokenizer);
  const turnIndexes = messages.flatMap((m, i) => (m.role === "assistant" ? [i] : []));
  // Spans that do not pair one to one with the assistant turns cannot be attributed: no logprobs.
  const sources = spans.length === turnIndexes.length ? turnSources(calls, messages, turnIndexes, volatilePatterns.map(globalRegex)) : [];

  const builder = new TraceBuilder("retokenize", ids.slice(0, spans[0]?.[0] ?? ids.length));
  let cursor = spans[0]?.[0] ?? ids.length;
  spans.forEach(([start, end], n) => {
    builder.appendContext(ids.slice(cursor, start));
    const source = sources[n];
    if (source) builder.beginCall(source);
    appendSpan(builder, ids.slice(start, end), source);
    cursor = end;
  });
  builder.appendContext(ids.slice(cursor));
  return [builder];
}

/** Span tokens trainable; those in the common head/tail with the sampled ids carry logprobs. */
function appendSpan(builder: TraceBuilder, span: readonly number[], source: TokenCall | undefined): void {
  const sampled = source?.output_ids ?? [];
  const limit = Math.min(span.length, sampled.length);
  let head = 0;
  while (head < limit && span[head] === sampled[head]) head++;
  let tail = 0;
  while (tail < limit - head && span[span.length - 1 - tail] === sampled[sampled.length - 1 - tail]) tail++;
  span.forEach((id, i) => {
    const sampledAt = i < head ? i : i >= span.length - tail ? sampled.length - (span.length - i) : -1;
    const logprob = sampledAt >= 0 ? (source?.logprobs?.[sampledAt] ?? null) : null;
    builder.appendTrainable(id, logprob, sampledAt >= 0);
  });
}
