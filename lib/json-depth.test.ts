import { describe, expect, test } from "bun:test";
import { exceedsJsonDepth } from "./json-depth.ts";

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

describe("exceedsJsonDepth", () => {
  test("counts object and array nesting, {} being depth 1", () => {
    expect(exceedsJsonDepth("{}", 1)).toBe(false);
    expect(exceedsJsonDepth('{"a":[{}]}', 3)).toBe(false);
    expect(exceedsJsonDepth('{"a":[{}]}', 2)).toBe(true);
    expect(exceedsJsonDepth(nested(64), 64)).toBe(false);
    expect(exceedsJsonDepth(nested(65), 64)).toBe(true);
    expect(exceedsJsonDepth("[[],[],[]]", 2)).toBe(false);
    expect(exceedsJsonDepth("42", 0)).toBe(false);
  });

  test("brackets inside strings, with escaped quotes and backslashes, do not count", () => {
    expect(exceedsJsonDepth(JSON.stringify({ s: "[[[[{{{{" }), 1)).toBe(false);
    expect(exceedsJsonDepth(JSON.stringify({ s: 'say \\"[[[[' }), 1)).toBe(false);
    expect(exceedsJsonDepth(JSON.stringify({ s: "ends in a backslash \\", t: [[]] }), 2)).toBe(true);
    expect(exceedsJsonDepth(JSON.stringify({ s: "ends in a backslash \\", t: [[]] }), 3)).toBe(false);
  });

  test("a 50,000-deep body is found without parsing it", () => {
    const body = `{"model":"m","tools":[{"parameters":${'{"a":'.repeat(50_000)}1${"}".repeat(50_000)}}]}`;
    expect(exceedsJsonDepth(body, 256)).toBe(true);
  });

  test("malformed text is left to JSON.parse", () => {
    expect(exceedsJsonDepth('{"open string', 1)).toBe(false);
    expect(exceedsJsonDepth("]]]]", 1)).toBe(false);
  });
});
