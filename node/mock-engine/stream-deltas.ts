// Why: a streamed chat completion must carry, per sampled token, the piece of reasoning or
// content that token adds (and each tool call once its block is complete), consistent with the
// non-streamed parse of the whole output — as vLLM's streaming parsers do.
import type { BpeTokenizer } from "../tokenizer/bpe.ts";
import { THINK_END, THINK_START, TOOL_CALL_START, type Qwen3Output, type ParsedToolCall } from "../tokenizer/qwen3-output.ts";

export interface TokenDelta {
  reasoning: string;
  content: string;
  /** Tool calls whose block ends within this token (with their index in the response). */
  toolCalls: { index: number; call: ParsedToolCall }[];
}

type CharClass = "reasoning" | "content" | "drop";

/** Char ranges of the output text, mirroring splitReasoning / splitToolCalls. */
function classifier(text: string, parsed: Qwen3Output): { classOf: (pos: number) => CharClass; callEnds: number[] } {
  const thinkAt = text.indexOf(THINK_START);
  const bodyStart = thinkAt === -1 ? 0 : thinkAt + THINK_START.length;
  let reasoningEnd = bodyStart;
  let contentStart = bodyStart;
  if (parsed.reasoning !== undefined) {
    reasoningEnd = text.indexOf(THINK_END, bodyStart);
    contentStart = reasoningEnd + THINK_END.length;
  }
  const callEnds: number[] = [];
  let contentEnd = text.length;
  if (parsed.toolCalls.length > 0) {
    contentEnd = text.indexOf(TOOL_CALL_START, contentStart);
    const block = /<tool_call>[\s\S]*?<\/tool_call>|<tool_call>[\s\S]*/g;
    block.lastIndex = contentEnd;
    for (let m = block.exec(text); m !== null; m = block.exec(text)) callEnds.push(m.index + m[0].length);
  }
  const classOf = (pos: number): CharClass => {
    if (parsed.reasoning !== undefined && pos >= bodyStart && pos < reasoningEnd) return "reasoning";
    if (pos >= contentStart && pos < contentEnd) return "content";
    return "drop";
  };
  return { classOf, callEnds };
}

/**
 * One delta per output token; text is decoded incrementally, holding back partial characters.
 * `text` is the whole output text (shorter than the decoded ids when a stop string trimmed it).
 */
export function tokenDeltas(tokenizer: BpeTokenizer, outputIds: readonly number[], parsed: Qwen3Output, text: string): TokenDelta[] {
  const { classOf, callEnds } = classifier(text, parsed);
  const deltas: TokenDelta[] = [];
  let emitted = 0;
  let nextCall = 0;
  for (let i = 0; i < outputIds.length; i++) {
    const last = i === outputIds.length - 1;
    let prefix = tokenizer.decode(outputIds.slice(0, i + 1), { skipSpecialTokens: true });
    if (!last) prefix = prefix.replace(/\uFFFD+$/, "");
    const end = Math.max(emitted, Math.min(prefix.length, text.length));
    const delta: TokenDelta = { reasoning: "", content: "", toolCalls: [] };
    for (let pos = emitted; pos < end; pos++) {
      const cls = classOf(pos);
      if (cls !== "drop") delta[cls] += text[pos];
    }
    emitted = end;
    while (nextCall < parsed.toolCalls.length && (last || (callEnds[nextCall] ?? Infinity) <= emitted)) {
      delta.toolCalls.push({ index: nextCall, call: parsed.toolCalls[nextCall]! });
      nextCall++;
    }
    deltas.push(delta);
  }
  return deltas;
}
