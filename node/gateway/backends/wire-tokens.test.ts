import { describe, expect, test } from "bun:test";
import { LogprobEntries, SglangTokenLogprobs, TokenIds, type SglangTokenLogprob } from "./wire-tokens.ts";

describe("engine token wire schemas", () => {
  test("token ids: integers in [0, 2^32) only (what the store packs as uint32)", () => {
    expect(TokenIds.parse([0, 151645, 7, 2 ** 32 - 1])).toEqual([0, 151645, 7, 2 ** 32 - 1]);
    for (const bad of [[1.5], [-1], ["3"], [null], [true], [Number.NaN], [Number.POSITIVE_INFINITY], [2 ** 32], [1, , 2], "1,2", { 0: 1 }]) {
      expect(TokenIds.safeParse(bad).success).toBe(false);
    }
  });

  test("logprob entries: each an object with a numeric logprob (other fields kept, unread)", () => {
    const entries = [{ token: "a", logprob: -0.5, bytes: [97] }, { logprob: -9999 }];
    expect(LogprobEntries.parse(entries)).toEqual(entries);
    for (const bad of [[{ logprob: "x" }], [null], [{}], [1]]) expect(LogprobEntries.safeParse(bad).success).toBe(false);
  });

  test("SGLang logprob tuples: [logprob, non-negative integer id, text or null]", () => {
    const tuples: SglangTokenLogprob[] = [
      [-0.25, 151645, null],
      [0, 7, "a"],
      [-9999, 0, ""],
    ];
    expect(SglangTokenLogprobs.parse(tuples)).toEqual(tuples);
    expect(SglangTokenLogprobs.parse([])).toEqual([]);
    const bad = [
      [[-0.1, 7]],
      [[-0.1, 7, null, "x"]],
      [[-0.1, 1.5, null]],
      [[-0.1, -1, null]],
      [["-0.1", 7, null]],
      [[null, 7, null]],
      [[-0.1, 7, 3]],
      [{ 0: -0.1, 1: 7, 2: null }],
      [null],
      "x",
    ];
    for (const value of bad) expect(SglangTokenLogprobs.safeParse(value).success).toBe(false);
  });
});
