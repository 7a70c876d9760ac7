// Wrong-fix candidates: one operator changed per mutant, only in code (never in strings or
// comments), spread over the file and bounded in number.
import { describe, expect, test } from "bun:test";
import { pythonCodeMask, pythonMutants } from "./mutants.ts";

describe("python code mask", () => {
  test("strings (single, double, triple, escaped quotes) and comments are not code", () => {
    const source = `a = "x == y" # b <= c\nd = 'it\\'s' + """\nq == r\n""" + e`;
    const mask = pythonCodeMask(source);
    const code = [...source].filter((_, i) => mask[i]).join("");
    expect(code).toBe("a =  \nd =  +  + e");
  });
});

describe("python mutants", () => {
  test("each mutant changes one operator in code, with where and what", () => {
    const source = "def f(x):\n    # x == 0 here\n    if x <= 1 and 'a<b' != x:\n        return x + 1\n    return False\n";
    const mutants = pythonMutants(source, 50);
    expect(mutants.map((m) => m.description)).toEqual([
      'line 3: "<=" → "<"',
      'line 3: "and" → "or"',
      'line 3: "!=" → "=="',
      'line 4: " + " → " - "',
      'line 4: "1" → "2"',
      'line 5: "False" → "True"',
    ]);
    for (const m of mutants) {
      expect(m.text).toContain("# x == 0 here");
      expect(m.text).toContain("'a<b'");
      expect(m.text).not.toBe(source);
    }
    expect(mutants[0]!.text).toContain("if x < 1 and");
  });

  test("annotations, shifts and augmented operators are left alone; the picks spread over the file and stop at the limit", () => {
    expect(pythonMutants("def f(x) -> int:\n    return x << 2 >> 1\n", 10)).toEqual([]);
    const long = Array.from({ length: 40 }, (_, i) => `v${i} = a${i} == b`).join("\n");
    const picked = pythonMutants(long, 4).map((m) => Number(/line (\d+)/.exec(m.description)![1]));
    expect(picked).toEqual([1, 11, 21, 31]);
  });
});
