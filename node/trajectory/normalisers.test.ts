import { expect, test } from "bun:test";
import { NORMALISATION_KINDS } from "../../protocol/trace.ts";
import { DEFAULT_VOLATILE_PATTERNS, explainDivergence, textNormalisers } from "./normalisers.ts";

const all = new Set(NORMALISATION_KINDS);
const normalisers = textNormalisers(DEFAULT_VOLATILE_PATTERNS);
const explain = (a: string, b: string, allowed = all) => explainDivergence(a, b, normalisers, allowed);

test("each declared asymmetry is named alone", () => {
  expect(explain("<|im_start|>assistant\n<think>\n\n</think>\n\nHi<|im_end|>", "<|im_start|>assistant\nHi<|im_end|>")).toEqual(["generation-glue"]);
  expect(explain("<|im_start|>assistant\n<think>\nplan\n</think>\n\nHi<|im_end|>", "<|im_start|>assistant\nHi<|im_end|>")).toEqual(["thinking-strip"]);
  expect(
    explain(
      "x-anthropic-billing-header: cc_version=2.0.1; cch=1;\nBe good<|im_end|>",
      "x-anthropic-billing-header: cc_version=2.0.2; cch=9;\nBe good<|im_end|>",
    ),
  ).toEqual(["volatile-text"]);
  expect(
    explain(
      '<tool_call>\n{"name":"bash","arguments":{"b":1,"a":"x"}}\n</tool_call>',
      '<tool_call>\n{"name": "bash", "arguments": {"a": "x", "b": 1}}\n</tool_call>',
    ),
  ).toEqual(["tool-args-drift"]);
  expect(explain("same text", "same text")).toEqual(["tokenization-drift"]);
});

test("combined asymmetries name only the ones needed", () => {
  const sampled = '<think>\nplan\n</think>\n\n<tool_call>\n{"name":"bash","arguments":{"c":"ls"}}\n</tool_call><|im_end|>';
  const history = '<tool_call>\n{"name": "bash", "arguments": {"c": "ls"}}\n</tool_call><|im_end|>';
  expect(explain(sampled, history)).toEqual(["thinking-strip", "tool-args-drift"]);
});

test("real edits and disallowed kinds are not explained", () => {
  expect(explain("<|im_start|>user\nfix bug A<|im_end|>", "<|im_start|>user\nfix bug B<|im_end|>")).toBeNull();
  expect(explain('<tool_call>{"name":"bash","arguments":{"c":"ls"}}</tool_call>', '<tool_call>{"name":"bash","arguments":{"c":"rm"}}</tool_call>')).toBeNull();
  expect(explain("a<think>x</think>b", "ab", new Set())).toBeNull();
  expect(explain("same", "same", new Set(["thinking-strip"] as const))).toBeNull();
});
