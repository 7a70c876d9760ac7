// Why: the lossy baseline the merge strategies are compared with — re-render the final
// conversation with the chat template, tokenize it, and train on the assistant spans. Each span
// is matched to the call that sampled it; only tokens that line up with the sampled ids (common
// head and tail of the span) count as exactly sampled and carry a logprob.
import type { Message, ToolCall } from "../../protocol/chat.ts";
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

function turnKey(content: string, toolCalls: readonly ToolCall[] | undefined): string {
  return JSON.stringify([content.trim(), (toolCalls ?? []).map((tc) => [tc.name, canonicalArguments(tc.arguments)])]);
}

function indexOfSequence(ids: readonly number[], seq: readonly number[], from: number): number {
  outer: for (let i = from; i + seq.length <= ids.length; i++) {
    for (let k = 0; k < seq.length; k++) if (ids[i + k] !== seq[k]) continue outer;
    return i;
  }
  return -1;
}

/** [start, end) of each assistant message body (header excluded, end marker included). */
function assistantSpans(ids: readonly number[], header: readonly number[], endId: number): [number, number][] {
  const spans: [number, number][] = [];
  for (let at = indexOfSequence(ids, header, 0); at >= 0; at = indexOfSequence(ids, header, at + 1)) {
    const start = at + header.length;
    const marker = ids.indexOf(endId, start);
    spans.push([start, marker < 0 ? ids.length : marker + 1]);
  }
  return spans;
}

export function retokenizeTrace(calls: readonly TokenCall[], tokenizer: TrajectoryTokenizer): TraceBuilder[] {
  const last = calls.at(-1);
  if (!last) return [];
  const response = last.response;
  const messages: Message[] = [
    ...last.request.messages,
    { role: "assistant", content: response.content, reasoning: response.reasoning, tool_calls: response.tool_calls },
  ];
  const ids = tokenizer.encode(
    tokenizer.renderChat({ messages, tools: last.request.tools, thinking: last.request.thinking, addGenerationPrompt: false }),
  );
  const spans = assistantSpans(ids, tokenizer.encode(CHATML.assistantHeader), singleTokenId(tokenizer, CHATML.messageEnd));

  const sources = new Map<string, TokenCall[]>();
  for (const call of calls) {
    const key = turnKey(call.response.content, call.response.tool_calls);
    sources.set(key, [...(sources.get(key) ?? []), call]);
  }
  const assistantTurns = messages.filter((m) => m.role === "assistant");

  const builder = new TraceBuilder("retokenize", ids.slice(0, spans[0]?.[0] ?? ids.length));
  let cursor = spans[0]?.[0] ?? ids.length;
  spans.forEach(([start, end], n) => {
    builder.appendContext(ids.slice(cursor, start));
    const turn = assistantTurns[n];
    const source = turn ? sources.get(turnKey(turn.content, turn.tool_calls))?.shift() : undefined;
    if (source) builder.addCall(source);
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
