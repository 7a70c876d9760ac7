import { describe, expect, test } from "bun:test";
import { type FlagSpecs, UsageError, helpText, intFlag, listFlag, numberFlag, oneOf, parseFlags } from "./cli-args.ts";

const SPECS: FlagSpecs = {
  port: { type: "string", help: "port", default: "8300" },
  engine: { type: "string", help: "engine", multiple: true },
  open: { type: "boolean", help: "open mode" },
};

describe("parseFlags", () => {
  test("parses typed flags and repeated ones", () => {
    const values = parseFlags("x", "test", SPECS, ["--port", "9", "--engine", "a", "--engine", "b", "--open"])!;
    expect(intFlag(values, "port")).toBe(9);
    expect(listFlag(values, "engine")).toEqual(["a", "b"]);
    expect(values.open).toBe(true);
  });

  test("unknown flags and malformed numbers are usage errors naming the flag", () => {
    expect(() => parseFlags("x", "test", SPECS, ["--prot", "9"])).toThrow(UsageError);
    const values = parseFlags("x", "test", SPECS, ["--port", "nine"])!;
    expect(() => intFlag(values, "port")).toThrow("--port expects a number");
    expect(() => intFlag(parseFlags("x", "t", SPECS, ["--port", "1.5"])!, "port")).toThrow("--port expects an integer");
    expect(numberFlag(parseFlags("x", "t", SPECS, ["--port", "0.5"])!, "port")).toBe(0.5);
  });

  test("oneOf accepts only its choices", () => {
    const specs: FlagSpecs = { mode: { type: "string", help: "mode" } };
    expect(oneOf(parseFlags("x", "t", specs, ["--mode", "b"])!, "mode", ["a", "b"] as const)).toBe("b");
    expect(() => oneOf(parseFlags("x", "t", specs, ["--mode", "c"])!, "mode", ["a", "b"] as const)).toThrow("--mode must be one of a, b");
  });

  test("--help prints every flag with its default and returns null", () => {
    expect(parseFlags("x", "test", SPECS, ["--help"])).toBeNull();
    const text = helpText("x", "test", SPECS);
    expect(text).toContain("--port <value>");
    expect(text).toContain("default 8300");
    expect(text).toContain("repeatable");
  });
});
