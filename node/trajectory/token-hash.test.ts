import { expect, test } from "bun:test";
import { HashedTokens } from "./token-hash.ts";

function naiveCommonRun(a: number[], i: number, b: number[], j: number): number {
  let n = 0;
  while (i + n < a.length && j + n < b.length && a[i + n] === b[j + n]) n++;
  return n;
}

test("commonRun equals a token-by-token walk on sequences with shared runs", () => {
  let seed = 7;
  const rand = (n: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n;
  for (let round = 0; round < 200; round++) {
    const shared = Array.from({ length: rand(60) }, () => rand(151_000));
    const a = [...shared, ...Array.from({ length: rand(20) }, () => rand(4))];
    const b = [...shared, ...Array.from({ length: rand(20) }, () => rand(4))];
    const ha = HashedTokens.of(a);
    const hb = HashedTokens.extend(HashedTokens.of(b.slice(0, 10)), b.slice(10));
    const i = rand(a.length + 1);
    const j = Math.min(i + rand(3), b.length);
    expect(ha.commonRun(i, hb, j)).toBe(naiveCommonRun(a, i, b, j));
    expect(ha.commonRun(0, hb, 0)).toBe(naiveCommonRun(a, 0, b, 0));
  }
});

test("extend keeps earlier hashes: a prefix built in two steps equals one built at once", () => {
  const ids = [5, 9, 151_645, 198, 151_644, 77_091];
  const twoSteps = HashedTokens.extend(HashedTokens.of(ids.slice(0, 3)), ids.slice(3));
  expect(twoSteps.ids).toEqual(ids);
  expect(twoSteps.rangeEquals(0, HashedTokens.of(ids), 0, ids.length)).toBe(true);
  expect(twoSteps.rangeEquals(1, HashedTokens.of(ids), 0, 3)).toBe(false);
});
