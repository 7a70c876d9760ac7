// Near-duplicate detection per task: identical and nearly identical assistant turns are found at
// the threshold, different ones are not, and other tasks never match.
import { expect, test } from "bun:test";
import { NearDuplicates } from "./dedup.ts";

const base = "Let me look at the code. cat sieve.py Applying the fix. git apply the patch with the reference solution Done.";

test("per task: an identical or nearly identical attempt matches the kept one at the threshold; a different one or another task does not", () => {
  const d = new NearDuplicates(0.8);
  d.keep("t1", 0, base);
  expect(d.find("t1", base)).toBe(0);
  expect(d.find("t1", `${base} Also checked it.`)).toBe(0);
  expect(d.find("t1", "I am not sure where the problem is. git status --short")).toBeNull();
  expect(d.find("t2", base)).toBeNull();
  const exact = new NearDuplicates(1);
  exact.keep("t1", 3, base);
  expect(exact.find("t1", base)).toBe(3);
  expect(exact.find("t1", `${base} Also checked it.`)).toBeNull();
});
