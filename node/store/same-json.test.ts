import { describe, expect, test } from "bun:test";
import { sameJson } from "./same-json.ts";
import { concatPrefixLength } from "./token-codec.ts";

describe("sameJson", () => {
  test("equal as JSON: key order ignored, undefined properties absent", () => {
    expect(sameJson({ role: "tool", content: "x", name: undefined }, { content: "x", role: "tool" })).toBe(true);
    expect(sameJson([{ a: [1, { b: null }] }], [{ a: [1, { b: null }] }])).toBe(true);
  });

  test("different values, shapes and key sets are not equal", () => {
    expect(sameJson({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameJson({ a: 1, b: 2 }, { a: 1 })).toBe(false);
    expect(sameJson({ a: "x" }, { a: "y" })).toBe(false);
    expect(sameJson([1, 2], [1, 2, 3])).toBe(false);
    expect(sameJson([], {})).toBe(false);
    expect(sameJson({ a: null }, { a: undefined })).toBe(false);
    expect(sameJson("1", 1)).toBe(false);
  });
});

describe("concatPrefixLength", () => {
  test("counts the shared prefix across the head and into the tail", () => {
    expect(concatPrefixLength([1, 2, 3], [4, 5], [1, 2, 3, 4, 9])).toBe(4);
    expect(concatPrefixLength([1, 2, 3], [4, 5], [1, 2, 3, 4, 5, 6])).toBe(5);
    expect(concatPrefixLength([1, 2, 3], [4, 5], [1, 7])).toBe(1);
    expect(concatPrefixLength([1, 2, 3], [4, 5], [1, 2])).toBe(2);
    expect(concatPrefixLength([], [4], [4, 4])).toBe(1);
  });
});
