import { describe, expect, test } from "bun:test";
import { LogprobEntries, TokenIds } from "./wire-tokens.ts";

describe("engine token wire schemas", () => {
  test("token ids: non-negative integers only", () => {
    expect(TokenIds.parse([0, 151645, 7])).toEqual([0, 151645, 7]);
    for (const bad of [[1.5], [-1], ["3"], [null], "1,2", { 0: 1 }]) expect(TokenIds.safeParse(bad).success).toBe(false);
  });

  test("logprob entries: each an object with a numeric logprob (other fields kept, unread)", () => {
    const entries = [{ token: "a", logprob: -0.5, bytes: [97] }, { logprob: -9999 }];
    expect(LogprobEntries.parse(entries)).toEqual(entries);
    for (const bad of [[{ logprob: "x" }], [null], [{}], [1]]) expect(LogprobEntries.safeParse(bad).success).toBe(false);
  });
});
