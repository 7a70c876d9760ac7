import { describe, expect, test } from "bun:test";
import { CacheBudget } from "../../cache-budget.ts";
import { PromptIdsJson } from "./prompt-ids-json.ts";

const vllm = () => new PromptIdsJson((answer) => answer);
const sglang = () => new PromptIdsJson((answer) => (answer.choices as unknown[] | undefined)?.[0]);
const vllmAnswer = (ids: unknown[]) =>
  JSON.stringify({ id: "c", choices: [{ token_ids: [7, 8], logprobs: { content: [] } }], prompt_token_ids: ids, usage: { prompt_tokens: ids.length } });
const sglangAnswer = (ids: unknown[]) =>
  JSON.stringify({ id: "c", choices: [{ message: { content: "]" }, prompt_token_ids: ids, meta_info: { output_token_logprobs: [[-0.5, 9, null]] } }] });

/** The parsed answer with its Uint32Array ids as a plain array, to compare with what JSON.parse gives. */
function plain(value: unknown): unknown {
  if (value instanceof Uint32Array) return Array.from(value);
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

const bytes = (text: string) => Buffer.from(text);

/** A seeded stream of pseudo-random numbers in [0, 1). */
function random(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

describe("PromptIdsJson", () => {
  test("every answer parses to what JSON.parse gives: prompts that extend, repeat, shrink, diverge or start over, in two sessions", () => {
    const vllmParser = vllm();
    for (const [parser, answer] of [
      [vllmParser, vllmAnswer],
      [sglang(), sglangAnswer],
    ] as const) {
      // Every call's ids, checked again at the end: later calls grow the session's buffer past them, never into them.
      const handedOut: Array<[Uint32Array, number[]]> = [];
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
        else if (move < 0.6)
          ids = ids.slice(0, Math.floor(next() * ids.length)); // compaction: a shorter prompt
        else if (move < 0.7 && ids.length > 0)
          ids = [...ids.slice(0, -1), ids.at(-1)! * 10 + 1]; // the last id's digits extended
        else if (move < 0.8) ids = Array.from({ length: Math.floor(next() * 30) }, () => Math.floor(next() * 151_000));
        prompts.set(session, ids);
        const text = answer(ids);
        const parsed = parser.parse(session, bytes(text)) as Record<string, unknown>;
        expect(plain(parsed)).toEqual(JSON.parse(text));
        const holder = (parser === vllmParser ? parsed : (parsed.choices as Record<string, unknown>[])[0]!) as { prompt_token_ids: unknown };
        expect(holder.prompt_token_ids).toBeInstanceOf(Uint32Array); // plain ids always take the fast path
        handedOut.push([holder.prompt_token_ids as Uint32Array, ids]);
      }
      for (const [view, ids] of handedOut) expect(Array.from(view)).toEqual(ids);
    }
  });

  test("a prompt that extends the previous one shares its buffer; one that does not gets a buffer of its own", () => {
    const parser = vllm();
    const ids = (text: string) => (parser.parse("s", bytes(text)) as { prompt_token_ids: Uint32Array }).prompt_token_ids;
    const first = ids(vllmAnswer([1, 2, 3]));
    const same = ids(vllmAnswer([1, 2, 3]));
    const longer = ids(vllmAnswer([1, 2, 3, 4]));
    const other = ids(vllmAnswer([1, 2, 5]));
    expect([...same, ...longer, ...other]).toEqual([1, 2, 3, 1, 2, 3, 4, 1, 2, 5]);
    expect(same).not.toBe(first);
    expect(longer.buffer).toBe(first.buffer);
    expect(other.buffer).not.toBe(first.buffer);
    expect([...first, ...longer]).toEqual([1, 2, 3, 1, 2, 3, 4]);
  });

  test("answers of another layout, with lists that are not plain ids, or without the field parse in full; text that is not JSON throws", () => {
    const parser = vllm();
    parser.parse("s", bytes(vllmAnswer([1, 2])));
    const cases = [
      vllmAnswer([1, 2, "x"]),
      vllmAnswer([1, 2, [3]]),
      vllmAnswer([1, 2, 3.5, null]),
      JSON.stringify({ nested: { prompt_token_ids: [1, 2, 5] }, prompt_token_ids: [1, 2] }), // the field first met elsewhere
      JSON.stringify({ prompt_token_ids: [1, 2] }, null, 1), // whitespace
      JSON.stringify({ choices: [] }),
      JSON.stringify({ prompt_token_ids: null }),
    ];
    for (const text of cases) expect(parser.parse("s", bytes(text))).toEqual(JSON.parse(text));
    expect(sglang().parse("s", bytes(vllmAnswer([1, 2])))).toEqual(JSON.parse(vllmAnswer([1, 2]))); // vLLM's layout under SGLang's holder
    for (const text of ['{"prompt_token_ids":[1,2,', '{"prompt_token_ids":[1,2,]}', '{"prompt_token_ids":[1,2]', "not json"]) {
      expect(() => parser.parse("s", bytes(text))).toThrow(SyntaxError);
    }
    // Ids JSON.parse reads but the fast path does not: leading zeros are JSON errors; 2^32 and up are numbers, not token ids.
    for (const ids of ["[01]", "[1,-2]", "[4294967296]", "[1 ,2]"]) {
      const text = `{"prompt_token_ids":${ids}}`;
      let expected: unknown;
      try {
        expected = JSON.parse(text);
      } catch {
        expect(() => parser.parse("s", bytes(text))).toThrow(SyntaxError);
        continue;
      }
      expect(parser.parse("s", bytes(text))).toEqual(expected);
    }
    expect(plain(parser.parse("s", bytes('{"prompt_token_ids":[4294967295,0]}')))).toEqual({ prompt_token_ids: [4294967295, 0] });
    const utf8 = JSON.stringify({ content: "é ✓ \u00e9 😀", prompt_token_ids: [7] });
    expect(plain(parser.parse("s", bytes(utf8)))).toEqual(JSON.parse(utf8));
  });

  test("a session's previous ids are charged to the shared byte budget and dropped when it is forgotten or evicted", () => {
    const budget = new CacheBudget();
    const parser = vllm();
    parser.shareCacheBudget(budget);
    const ids = Array.from({ length: 1000 }, (_, i) => i);
    parser.parse("s", bytes(vllmAnswer(ids)));
    expect(budget.entries).toBe(1);
    expect(budget.usedBytes).toBeGreaterThan(ids.length * 4);
    parser.parse(null, bytes(vllmAnswer(ids))); // no session: nothing remembered
    expect(budget.entries).toBe(1);
    parser.forget("s");
    expect(budget.entries).toBe(0);

    const tight = new CacheBudget(budget.maxBytes);
    parser.shareCacheBudget(tight);
    parser.parse("s", bytes(vllmAnswer(ids)));
    const one = tight.usedBytes;
    const small = new CacheBudget(one + 8);
    parser.shareCacheBudget(small);
    parser.parse("t", bytes(vllmAnswer(ids))); // s is the least recently used: it goes
    expect(small.entries).toBe(1);
    expect(plain(parser.parse("s", bytes(vllmAnswer([...ids, 5]))))).toEqual(JSON.parse(vllmAnswer([...ids, 5])));
  });
});
