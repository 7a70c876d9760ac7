import { describe, expect, test } from "bun:test";
import { CacheBudget } from "../../cache-budget.ts";
import { PromptIdsJson } from "./prompt-ids-json.ts";

const vllm = () => new PromptIdsJson((answer) => answer);
const sglang = () => new PromptIdsJson((answer) => (answer.choices as unknown[] | undefined)?.[0]);
const vllmAnswer = (ids: unknown[]) => JSON.stringify({ id: "c", choices: [{ token_ids: [7, 8], logprobs: { content: [] } }], prompt_token_ids: ids, usage: { prompt_tokens: ids.length } });
const sglangAnswer = (ids: unknown[]) => JSON.stringify({ id: "c", choices: [{ message: { content: "]" }, prompt_token_ids: ids, meta_info: { output_token_logprobs: [[-0.5, 9, null]] } }] });

/** A seeded stream of pseudo-random numbers in [0, 1). */
function random(seed: number): () => number {
  return () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

describe("PromptIdsJson", () => {
  test("every answer parses to what JSON.parse gives: prompts that extend, repeat, shrink, diverge or start over, in two sessions", () => {
    for (const [parser, answer] of [
      [vllm(), vllmAnswer],
      [sglang(), sglangAnswer],
    ] as const) {
      const next = random(7);
      const prompts = new Map<string, number[]>([
        ["a", []],
        ["b", []],
      ]);
      for (let call = 0; call < 300; call++) {
        const session = next() < 0.5 ? "a" : "b";
        let ids = prompts.get(session)!;
        const move = next();
        if (move < 0.5) ids = ids.concat(Array.from({ length: 1 + Math.floor(next() * 40) }, () => Math.floor(next() * 151_000)));
        else if (move < 0.6) ids = ids.slice(0, Math.floor(next() * ids.length)); // compaction: a shorter prompt
        else if (move < 0.7 && ids.length > 0) ids = [...ids.slice(0, -1), ids.at(-1)! * 10 + 1]; // the last id's digits extended
        else if (move < 0.8) ids = Array.from({ length: Math.floor(next() * 30) }, () => Math.floor(next() * 151_000));
        prompts.set(session, ids);
        const text = answer(ids);
        expect(parser.parse(session, text)).toEqual(JSON.parse(text));
      }
    }
  });

  test("the ids of each answer are a fresh array, never one handed out for an earlier call", () => {
    const parser = vllm();
    const first = parser.parse("s", vllmAnswer([1, 2, 3])) as { prompt_token_ids: number[] };
    const same = parser.parse("s", vllmAnswer([1, 2, 3])) as { prompt_token_ids: number[] };
    const longer = parser.parse("s", vllmAnswer([1, 2, 3, 4])) as { prompt_token_ids: number[] };
    expect(same.prompt_token_ids).toEqual([1, 2, 3]);
    expect(same.prompt_token_ids).not.toBe(first.prompt_token_ids);
    expect(longer.prompt_token_ids).toEqual([1, 2, 3, 4]);
  });

  test("answers of another layout, with lists that are not plain ids, or without the field parse in full; text that is not JSON throws", () => {
    const parser = vllm();
    parser.parse("s", vllmAnswer([1, 2]));
    const cases = [
      vllmAnswer([1, 2, "x"]),
      vllmAnswer([1, 2, [3]]),
      vllmAnswer([1, 2, 3.5, null]),
      JSON.stringify({ nested: { prompt_token_ids: [1, 2, 5] }, prompt_token_ids: [1, 2] }), // the field first met elsewhere
      JSON.stringify({ prompt_token_ids: [1, 2] }, null, 1), // whitespace
      JSON.stringify({ choices: [] }),
      JSON.stringify({ prompt_token_ids: null }),
    ];
    for (const text of cases) expect(parser.parse("s", text)).toEqual(JSON.parse(text));
    expect(sglang().parse("s", vllmAnswer([1, 2]))).toEqual(JSON.parse(vllmAnswer([1, 2]))); // vLLM's layout under SGLang's holder
    expect(() => parser.parse("s", '{"prompt_token_ids":[1,2,')).toThrow(SyntaxError);
    expect(() => parser.parse(null, "not json")).toThrow(SyntaxError);
  });

  test("a session's previous ids are charged to the shared byte budget and dropped when it is forgotten or evicted", () => {
    const budget = new CacheBudget();
    const parser = vllm();
    parser.shareCacheBudget(budget);
    const ids = Array.from({ length: 1000 }, (_, i) => i);
    parser.parse("s", vllmAnswer(ids));
    expect(budget.entries).toBe(1);
    expect(budget.usedBytes).toBeGreaterThan(ids.length * 8);
    parser.parse(null, vllmAnswer(ids)); // no session: nothing remembered
    expect(budget.entries).toBe(1);
    parser.forget("s");
    expect(budget.entries).toBe(0);

    const tight = new CacheBudget(budget.maxBytes);
    parser.shareCacheBudget(tight);
    parser.parse("s", vllmAnswer(ids));
    const one = tight.usedBytes;
    const small = new CacheBudget(one + 8);
    parser.shareCacheBudget(small);
    parser.parse("t", vllmAnswer(ids)); // s is the least recently used: it goes
    expect(small.entries).toBe(1);
    expect(parser.parse("s", vllmAnswer([...ids, 5]))).toEqual(JSON.parse(vllmAnswer([...ids, 5])));
  });
});
