import { describe, expect, test } from "bun:test";
import { getChatTemplate, pivotToTemplateMessages } from "../../tokenizer/index.ts";
import type { PivotMessage } from "../pivot.ts";
import { assistantTurnKey, TokenSpliceCache } from "./token-splice.ts";

const template = getChatTemplate();
const tokenizer = template.tokenizer;
const encode = (text: string) => tokenizer.encode(text);
const imEnd = tokenizer.addedTokenId("<|im_end|>")!;

describe("token splice", () => {
  test("turn keys ignore call ids, surrounding whitespace and argument spacing", () => {
    const a = assistantTurnKey({ content: "\n\n", tool_calls: [{ id: "1", name: "bash", arguments: '{"command": "ls"}' }] });
    const b = assistantTurnKey({ content: "", tool_calls: [{ id: "2", name: "bash", arguments: '{"command":"ls"}' }] });
    expect(a).toBe(b);
  });

  test("an earlier turn's sampled ids replace its re-rendered text, even when they tokenize differently", () => {
    const history: PivotMessage[] = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello there" },
      { role: "user", content: "again" },
    ];
    const promptText = template.render(pivotToTemplateMessages(history), { enableThinking: false });
    // A sampling that BPE would not produce for the same text: "hello there" one char per token.
    const sampledIds = [...[..."hello there"].flatMap((ch) => encode(ch)), imEnd];
    const cache = new TokenSpliceCache(10);
    cache.remember("s", { content: "hello there" }, { text: tokenizer.decode(sampledIds), ids: sampledIds }, encode);

    // Drift was measured when the turn was remembered: splicing encodes only the text around it.
    const encoded: string[] = [];
    const spliced = cache.splice("s", history, promptText, (text) => (encoded.push(text), encode(text)));
    expect(spliced.stats).toEqual({ used: 1, missed: 0, drift: 1 });
    expect(encoded.join("")).toBe(promptText.replace(tokenizer.decode(sampledIds), ""));
    expect(tokenizer.decode(spliced.ids)).toBe(promptText);
    const start = spliced.ids.indexOf(sampledIds[0]!);
    expect(spliced.ids.slice(start, start + sampledIds.length)).toEqual(sampledIds);
    expect(spliced.ids).not.toEqual(encode(promptText));
  });

  test("a turn the template re-renders differently, or an unknown session, is counted as missed", () => {
    const history: PivotMessage[] = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
      { role: "user", content: "again" },
    ];
    const promptText = template.render(pivotToTemplateMessages(history));
    const cache = new TokenSpliceCache(10);
    // The sample held reasoning, which Qwen3 drops from turns before the last user message.
    const sampled = encode("<think>\nhm\n</think>\n\nhello<|im_end|>");
    cache.remember("s", { content: "hello" }, { text: tokenizer.decode(sampled), ids: sampled }, encode);
    expect(cache.splice("s", history, promptText, encode)).toEqual({ ids: encode(promptText), stats: { used: 0, missed: 1, drift: 0 } });
    expect(cache.splice("other", history, promptText, encode).stats).toEqual({ used: 0, missed: 1, drift: 0 });
  });

  test("the cache forgets the least recently used session beyond its bound", () => {
    const cache = new TokenSpliceCache(1);
    const history: PivotMessage[] = [
      { role: "user", content: "q" },
      { role: "assistant", content: "a" },
    ];
    const text = template.render(pivotToTemplateMessages(history), { addGenerationPrompt: false });
    const ids = encode("a<|im_end|>");
    cache.remember("s1", { content: "a" }, { text: "a<|im_end|>", ids }, encode);
    expect(cache.splice("s1", history, text, encode).stats.used).toBe(1);
    cache.remember("s2", { content: "a" }, { text: "a<|im_end|>", ids }, encode);
    expect(cache.splice("s1", history, text, encode).stats.used).toBe(0);
  });
});
