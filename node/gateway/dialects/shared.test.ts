import { describe, expect, test } from "bun:test";
import { z } from "zod";
import type { PivotRequest } from "../pivot.ts";
import { joinTextParts, renderHintsOf } from "./shared.ts";

const request = (renderHints?: Record<string, unknown>): PivotRequest => ({
  model: "m",
  messages: [{ role: "user", content: "hi" }],
  tools: [],
  sampling: {},
  stream: false,
  ...(renderHints !== undefined && { render_hints: renderHints }),
});

describe("joinTextParts", () => {
  test("joins the kept parts with a newline; a kept part without text counts as empty", () => {
    const parts = [{ type: "text", text: "a" }, { type: "image" }, { type: "text" }, { type: "text", text: "b" }];
    expect(joinTextParts(parts, (part) => part.type === "text")).toBe("a\n\nb");
  });
});

describe("renderHintsOf", () => {
  const Hints = z.object({ flag: z.boolean().default(false) });

  test("reads the hints the dialect stored, with defaults for missing fields", () => {
    expect(renderHintsOf(Hints, request({ flag: true }))).toEqual({ flag: true });
    expect(renderHintsOf(Hints, request())).toEqual({ flag: false });
  });

  test("hints that do not parse fall back to the schema's defaults", () => {
    expect(renderHintsOf(Hints, request({ flag: "yes" }))).toEqual({ flag: false });
  });
});
