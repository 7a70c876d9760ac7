import { describe, expect, test } from "bun:test";
import type { RecordedCall } from "../../protocol/calls.ts";
import { TrajectoryResult } from "../../protocol/trace.ts";
import { rebuild, STRATEGIES } from "./index.ts";
import { expectEqualsLastCall, expectFaithfulMerge } from "../../test/support/trajectory/faithfulness.ts";
import { QWEN3_EOS, qwen3Tokenizer, ScriptedSession } from "../../test/support/trajectory/qwen3.ts";
import * as scenario from "../../test/support/trajectory/scenarios.ts";

const tokenizer = qwen3Tokenizer();
const MERGES = ["prefix-merge", "template-aware"] as const;

function run(calls: RecordedCall[], strategy: (typeof STRATEGIES)[number], volatilePatterns?: RegExp[]) {
  const result = rebuild(calls, strategy, { tokenizer, ...(volatilePatterns ? { volatilePatterns } : {}) });
  TrajectoryResult.parse(result);
  return result;
}

describe("clean multi-turn tool loop", () => {
  const calls = scenario.cleanSession(3);

  test.each(MERGES)("%s: one trace, every sampled token exact, equal to the last call", (strategy) => {
    const { traces, stats } = run(calls, strategy);
    expect(traces.length).toBe(1);
    expect(traces[0]!.calls).toEqual([0, 1, 2, 3]);
    expectFaithfulMerge(traces[0]!, calls);
    expectEqualsLastCall(traces[0]!, calls);
    expect(stats.splits).toEqual([]);
    expect(stats.logprob_coverage).toBe(1);
    expect(Object.values(stats.normalisations).every((n) => n === 0)).toBe(true);
  });

  test("per-call: one trace per call, each the call's prompt and output", () => {
    const { traces, stats } = run(calls, "per-call");
    expect(traces.map((t) => t.calls)).toEqual([[0], [1], [2], [3]]);
    traces.forEach((t, i) => expectEqualsLastCall(t, [calls[i]!]));
    expect(stats.total_tokens).toBe(calls.reduce((n, c) => n + c.prompt_ids!.length + c.output_ids!.length, 0));
  });

  test("retokenize: assistant spans of the final conversation, all matching the samples here", () => {
    const { traces, stats } = run(calls, "retokenize");
    expect(traces.length).toBe(1);
    expect(traces[0]!.calls).toEqual([0, 1, 2, 3]);
    expect(stats.trainable_tokens).toBe(calls.reduce((n, c) => n + c.output_ids!.length, 0));
    expect(stats.trainable_exactly_sampled).toBe(stats.trainable_tokens);
  });

  test("context tokens carry a null logprob and mask 0; sampled ones the engine's logprob", () => {
    const trace = run(calls, "prefix-merge").traces[0]!;
    trace.loss_mask.forEach((m, i) => expect(m === 1).toBe(trace.logprobs[i] !== null));
    expect(trace.finish_reason).toBe("stop");
    expect(trace.policy_versions).toEqual([0, 0, 0, 0]);
  });
});

describe("thinking on: earlier reasoning stripped from history", () => {
  test("harness drops reasoning: prefix-merge splits at every call, template-aware keeps one trace", () => {
    const calls = scenario.thinkingStripSession();
    const strict = run(calls, "prefix-merge");
    expect(strict.stats.trace_count).toBe(calls.length);
    expect(strict.stats.split_counts["thinking-strip"]).toBe(calls.length - 1);
    const aware = run(calls, "template-aware");
    expect(aware.traces.length).toBe(1);
    expectFaithfulMerge(aware.traces[0]!, calls);
    expect(aware.stats.normalisations["thinking-strip"]).toBe(calls.length - 1);
  });

  test("reasoning kept in the tool loop: only the next user query strips it", () => {
    const calls = scenario.laterQueryStripSession();
    const strict = run(calls, "prefix-merge");
    expect(strict.traces.map((t) => t.calls)).toEqual([
      [0, 1, 2],
      [3, 4, 5],
    ]);
    expect(strict.stats.splits).toEqual([{ seq: 3, cause: "thinking-strip", compared_with: 0 }]);
    const aware = run(calls, "template-aware");
    expect(aware.traces.length).toBe(1);
    expectFaithfulMerge(aware.traces[0]!, calls);
    // The three reasoning blocks of query 1 disappear when query 2 arrives.
    expect(aware.stats.normalisations["thinking-strip"]).toBe(3);
  });
});

describe("thinking off: generation-prompt glue", () => {
  const calls = scenario.thinkingOffSession();

  test("prefix-merge splits on the glue, template-aware merges and counts it", () => {
    const strict = run(calls, "prefix-merge");
    expect(strict.stats.trace_count).toBe(4);
    expect(strict.stats.splits.map((s) => s.cause)).toEqual(["generation-glue", "generation-glue", "generation-glue"]);
    const aware = run(calls, "template-aware");
    expect(aware.traces.length).toBe(1);
    expectFaithfulMerge(aware.traces[0]!, calls);
    expect(aware.stats.normalisations["generation-glue"]).toBe(3);
  });

  test("the merged trace keeps the glue the model saw before its first answer", () => {
    const trace = run(calls, "template-aware").traces[0]!;
    const glue = tokenizer.encode("<think>\n\n</think>\n\n");
    expect(trace.prompt_ids.slice(-glue.length)).toEqual(glue);
  });

  test("retokenize trains on glue the model never sampled and reports it", () => {
    const { stats } = run(calls, "retokenize");
    expect(stats.trainable_tokens - stats.trainable_exactly_sampled).toBe(tokenizer.encode("<think>\n\n</think>\n\n").length);
    expect(stats.logprob_coverage).toBeLessThan(1);
  });
});

describe("volatile system text", () => {
  const calls = scenario.volatileSystemSession();

  test("template-aware merges across a per-turn billing header; prefix-merge cannot", () => {
    const strict = run(calls, "prefix-merge");
    expect(strict.stats.split_counts["volatile-text"]).toBe(3);
    const aware = run(calls, "template-aware");
    expect(aware.traces.length).toBe(1);
    expectFaithfulMerge(aware.traces[0]!, calls);
    expect(aware.stats.normalisations["volatile-text"]).toBe(3);
  });

  test("without the pattern configured the header splits template-aware too", () => {
    const aware = run(calls, "template-aware", []);
    expect(aware.stats.trace_count).toBe(4);
    expect(aware.stats.split_counts["sub-agent"]).toBe(3);
  });
});

describe("tool-call argument re-serialisation", () => {
  test("compact sampled JSON vs the template's tojson: split strict, merged template-aware", () => {
    const calls = scenario.toolArgsDriftSession();
    expect(run(calls, "prefix-merge").stats.split_counts["tool-args-drift"]).toBe(3);
    const aware = run(calls, "template-aware");
    expect(aware.traces.length).toBe(1);
    expectFaithfulMerge(aware.traces[0]!, calls);
    expect(aware.stats.normalisations["tool-args-drift"]).toBe(3);
  });
});

describe("tokenization drift", () => {
  const calls = scenario.tokenizationDriftSession();

  test("the scenario's sampled ids really differ from the re-rendered ones", () => {
    const sampled = calls[1]!.output_ids!;
    const rerendered = calls[2]!.prompt_ids!;
    expect(tokenizer.decode(sampled)).toContain("Reading");
    const inPrompt = rerendered.join(",").includes(sampled.slice(0, -1).join(","));
    expect(inPrompt).toBe(false);
  });

  test("prefix-merge splits with cause tokenization-drift; template-aware keeps the sampled ids", () => {
    const strict = run(calls, "prefix-merge");
    expect(strict.stats.splits).toEqual([{ seq: 2, cause: "tokenization-drift", compared_with: 0 }]);
    const aware = run(calls, "template-aware");
    expect(aware.traces.length).toBe(1);
    expectFaithfulMerge(aware.traces[0]!, calls);
    expect(aware.stats.normalisations["tokenization-drift"]).toBe(1);
  });

  test("retokenize reports trainable tokens that were not sampled", () => {
    const { stats } = run(calls, "retokenize");
    expect(stats.trainable_exactly_sampled).toBeLessThan(stats.trainable_tokens);
  });
});

describe("structural breaks split every merge strategy", () => {
  test.each(MERGES)("%s: compaction starts a new trace, classified as compaction", (strategy) => {
    const calls = scenario.compactionSession();
    const { traces, stats } = run(calls, strategy);
    expect(traces.map((t) => t.calls)).toEqual([
      [0, 1, 2],
      [3, 4, 5],
    ]);
    expect(stats.splits).toEqual([{ seq: 3, cause: "compaction", compared_with: 0 }]);
    traces.forEach((t) => expectFaithfulMerge(t, calls));
  });

  test.each(MERGES)("%s: interleaved sub-agent gives two traces, classified as sub-agent", (strategy) => {
    const calls = scenario.subAgentSession();
    const { traces, stats } = run(calls, strategy);
    expect(traces.map((t) => t.calls)).toEqual([
      [0, 2, 5],
      [1, 3, 4],
    ]);
    expect(stats.splits).toEqual([{ seq: 1, cause: "sub-agent", compared_with: 0 }]);
    traces.forEach((t) => expectFaithfulMerge(t, calls));
  });

  test("a single open trace cannot hold two interleaved conversations", () => {
    const calls = scenario.subAgentSession();
    const { traces } = rebuild(calls, "template-aware", { tokenizer, maxOpenTraces: 1 });
    expect(traces.map((t) => t.calls)).toEqual([[0], [1], [2], [3, 4], [5]]);
  });
});

describe("calls without tokens", () => {
  test.each(STRATEGIES)("%s: text-only calls are skipped and reported", (strategy) => {
    const calls = scenario.textOnlySession();
    const { traces, stats } = run(calls, strategy);
    expect(stats.skipped).toEqual([{ seq: 1, reason: "text-only" }]);
    expect(stats.call_count).toBe(3);
    expect(stats.calls_used).toBe(2);
    expect(traces.flatMap((t) => t.calls)).toEqual([0, 2]);
  });

  test("failed calls are skipped as failed and do not break the trace", () => {
    const calls = scenario.cleanSession(2);
    const failed: RecordedCall = { ...calls[1]!, seq: 99, response: null, error: { code: "engine_error", message: "boom" } };
    const { traces, stats } = run([...calls, failed], "prefix-merge");
    expect(stats.skipped).toEqual([{ seq: 99, reason: "failed" }]);
    expect(traces.length).toBe(1);
  });
});

describe("an output cut by max tokens", () => {
  test("merges; the end marker the template adds in history is masked context", () => {
    const session = new ScriptedSession();
    const messages = [
      { role: "system" as const, content: "Be brief." },
      { role: "user" as const, content: "Explain tokenizers." },
    ];
    const cut = session.call({ messages, thinking: false }, { content: "A tokenizer splits text into", truncated: true });
    session.call(
      { messages: [...messages, { role: "assistant", content: cut.content }, { role: "user", content: "Go on." }], thinking: false },
      { content: "pieces called tokens." },
    );
    const { traces } = run(session.calls, "template-aware");
    expect(traces.length).toBe(1);
    const trace = traces[0]!;
    expectFaithfulMerge(trace, session.calls);
    const firstOut = session.calls[0]!.output_ids!;
    expect(firstOut.at(-1)).not.toBe(QWEN3_EOS);
    expect(trace.response_ids[firstOut.length]).toBe(QWEN3_EOS);
    expect(trace.loss_mask[firstOut.length]).toBe(0);
  });
});

test("calls are taken in seq order whatever order they arrive in", () => {
  const calls = scenario.cleanSession(2);
  const { traces } = run([...calls].reverse(), "prefix-merge");
  expect(traces.length).toBe(1);
  expectFaithfulMerge(traces[0]!, calls);
});

describe("exactly sampled needs the sampled id and its logprob", () => {
  test.each(STRATEGIES)("%s: a call recorded without logprobs trains, but none of its tokens count as exactly sampled", (strategy) => {
    const calls = scenario.cleanSession(1).map((c, i) => (i === 0 ? { ...c, logprobs: null } : c));
    const { traces, stats } = run(calls, strategy);
    const withoutLogprobs = calls[0]!.output_ids!.length;
    const sampled = calls.reduce((n, c) => n + c.output_ids!.length, 0);
    expect(stats.trainable_tokens).toBe(sampled);
    expect(stats.trainable_exactly_sampled).toBe(sampled - withoutLogprobs);
    expect(traces.flatMap((t) => t.logprobs.filter((lp, i) => lp === null && t.loss_mask[i] === 1))).toHaveLength(withoutLogprobs);
  });
});
