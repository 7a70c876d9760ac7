// Trajectory rebuilding on the committed sessions of the REAL harness CLIs and Polar's mini agent
// (test/fixtures/trajectories/, recorded by test/helpers/record-trajectory-fixtures.ts: vllm,
// tito and tito+splice backends, thinking on and off, two queries, a sub-agent, a compaction).
// For every strategy and every fixture: every trainable run with a logprob is a contiguous run of
// one call's sampled ids with its logprobs, no call's output is used twice, and the context-drift
// figures equal an independent count. Plus the regressions the audit of issue 7 found.
import { describe, expect, test } from "bun:test";
import type { RecordedCall } from "../protocol/calls.ts";
import { TrajectoryResult, type Trace } from "../protocol/trace.ts";
import { rebuild, STRATEGIES } from "../node/trajectory/index.ts";
import { qwen3Tokenizer } from "./support/trajectory/qwen3.ts";
import { checkSampledSpans } from "./support/trajectory/sampled-spans.ts";
import { allTrajectoryFixtures, type TrajectoryFixture } from "./helpers/trajectory-fixtures.ts";

const tokenizer = qwen3Tokenizer();
/** Rebuilds of 17K-token sessions: far under a second alone, generous for a busy machine. */
const REBUILD_TIMEOUT_MS = 60_000;
const fixtures = allTrajectoryFixtures();
const byName = new Map(fixtures.map((f) => [f.name, f]));
const fixture = (name: string): TrajectoryFixture => byName.get(name) ?? (undefined as never);

/** Drift as the issue defines it, from the trace's tokens and the call's prompt. */
function independentDrift(trace: Trace, spanStart: number, prompt: readonly number[]): number {
  const before = [...trace.prompt_ids, ...trace.response_ids.slice(0, spanStart)];
  let common = 0;
  while (common < before.length && common < prompt.length && before[common] === prompt[common]) common++;
  return before.length - common + (prompt.length - common);
}

const outputLength = (calls: RecordedCall[], seqs: number[]) => seqs.reduce((n, seq) => n + calls.find((c) => c.seq === seq)!.output_ids!.length, 0);

test("the fixtures cover the situations of issue 7", () => {
  expect(fixtures.map((f) => f.name)).toEqual(
    expect.arrayContaining([
      "mini-thinking-on-vllm",
      "mini-thinking-on-tito",
      "mini-thinking-on-tito-splice",
      "mini-thinking-off-vllm",
      "pi-two-queries-thinking-on-vllm",
      "pi-subagent-thinking-on-vllm",
      "codex-compaction-thinking-on-vllm",
      "claude-code-compaction-thinking-on-vllm",
      "qwen-code-compaction-thinking-on-tito",
    ]),
  );
  for (const f of fixtures) expect(f.calls.every((c) => c.error === null && c.output_ids !== null && c.logprobs?.length === c.output_ids.length)).toBe(true);
});

describe.each(fixtures.map((f) => [f.name, f] as const))("%s", (_name, { calls }) => {
  test.each(STRATEGIES.map((s) => [s]))(
    "%s: trainable runs are one call's sampled ids and logprobs, each used once; drift figures hold",
    (strategy) => {
      const result = TrajectoryResult.parse(rebuild(calls, strategy, { tokenizer }));
      const report = checkSampledSpans(result.traces, calls, strategy === "retokenize");
      expect(report.violations).toEqual([]);
      for (const [t, trace] of result.traces.entries()) {
        expect(trace.call_context_drift.length).toBe(trace.calls.length);
        expect(trace.stats.context_exact_calls).toBe(trace.call_context_drift.filter((d) => d === 0).length);
        expect(trace.stats.context_drift_tokens).toBe(trace.call_context_drift.reduce((n, d) => n + d, 0));
        if (strategy === "retokenize") continue;
        // Merges and per-call: each call's whole output is in its trace, and the drift is recomputed.
        expect(trace.stats.trainable_tokens).toBe(outputLength(calls, trace.calls));
        const drift = trace.calls.map((seq, k) => independentDrift(trace, report.spanStarts[t]![k]!, calls.find((c) => c.seq === seq)!.prompt_ids!));
        expect(trace.call_context_drift).toEqual(drift);
        if (strategy !== "template-aware") expect(drift.every((d) => d === 0)).toBe(true);
      }
      expect(result.stats.context_exact_calls).toBe(result.traces.reduce((n, t) => n + t.stats.context_exact_calls, 0));
      expect(result.stats.context_drift_tokens).toBe(result.traces.reduce((n, t) => n + t.stats.context_drift_tokens, 0));
      if (strategy !== "retokenize") expect(result.traces.flatMap((t) => t.calls).sort((a, b) => a - b)).toEqual(calls.map((c) => c.seq));
    },
    REBUILD_TIMEOUT_MS,
  );

  test(
    "template-aware with max_context_drift 0 builds exactly prefix-merge's traces and splits",
    () => {
      const exactOnly = rebuild(calls, "template-aware", { tokenizer, maxContextDrift: 0 });
      const strict = rebuild(calls, "prefix-merge", { tokenizer });
      const withoutStrategy = (traces: Trace[]) => traces.map(({ strategy: _strategy, ...rest }) => rest);
      expect(withoutStrategy(exactOnly.traces)).toEqual(withoutStrategy(strict.traces));
      expect(exactOnly.stats.splits).toEqual(strict.stats.splits);
      expect(exactOnly.stats.context_drift_tokens).toBe(0);
    },
    REBUILD_TIMEOUT_MS,
  );
});

test("the property check flags a logprob from elsewhere, a token used twice and a miscounted exact figure", () => {
  const { calls } = fixture("mini-thinking-on-vllm");
  const [trace] = rebuild(calls.slice(0, 1), "per-call", { tokenizer }).traces;
  const sampled = trace!.stats.trainable_exactly_sampled;
  const altered = { ...trace!, logprobs: trace!.logprobs.map((lp, i) => (i === 3 ? lp! - 1 : lp)) };
  expect(checkSampledSpans([altered], calls, false).violations).toEqual([
    `trace 0: the ${sampled} tokens at 0 are no contiguous run of a call's output ids with its logprobs`,
    `trace 0: stats say ${sampled} exactly sampled, 0 are`,
  ]);
  expect(checkSampledSpans([trace!, trace!], calls, false).violations).toContain("trace 1: sampled token 0 of call 0 is used twice");
});

describe("template-aware reports the context it did not show the engine", () => {
  test("thinking off: the generation glue kept after each earlier header, +4 tokens per turn, compounding", () => {
    const { calls } = fixture("pi-two-queries-thinking-off-vllm");
    const aware = rebuild(calls, "template-aware", { tokenizer });
    expect(aware.traces.map((t) => t.calls)).toEqual([[0, 1, 2, 3, 4, 5]]);
    expect(aware.stats.normalisations["generation-glue"]).toBe(5);
    // Only the first call saw exactly the trace's context; the trace's `<think>\n\n</think>\n\n`
    // after call 0's header is where each later prompt first differs.
    expect(aware.stats.context_exact_calls).toBe(1);
    const drift = aware.traces[0]!.call_context_drift;
    expect(drift[0]).toBe(0);
    for (let k = 1; k < drift.length; k++) expect(drift[k]!).toBeGreaterThan(drift[k - 1]!);
    const trace = aware.traces[0]!;
    const secondPrompt = calls[1]!.prompt_ids!;
    let common = 0;
    while (trace.prompt_ids.concat(trace.response_ids)[common] === secondPrompt[common]) common++;
    expect(tokenizer.decode(trace.prompt_ids.concat(trace.response_ids).slice(common, common + 4))).toBe("<think>\n\n</think>\n\n");
  });

  test("max_context_drift between 0 and the largest drift: a new trace where the limit would be passed", () => {
    const { calls } = fixture("pi-two-queries-thinking-on-vllm");
    const unlimited = rebuild(calls, "template-aware", { tokenizer });
    expect(unlimited.traces.map((t) => t.calls)).toEqual([[0, 1, 2, 3, 4, 5]]);
    const drift = unlimited.traces[0]!.call_context_drift;
    // Query 2 (call 3) drops query 1's reasoning from the prompt: the drift starts there.
    expect(drift.slice(0, 3)).toEqual([0, 0, 0]);
    expect(drift[3]!).toBeGreaterThan(0);
    const limit = drift[3]!;
    const limited = rebuild(calls, "template-aware", { tokenizer, maxContextDrift: limit });
    expect(limited.traces.map((t) => t.calls)).toEqual([
      [0, 1, 2, 3],
      [4, 5],
    ]);
    // Call 4's own prompt extends call 3's exactly: what is over the limit is the drift inherited.
    expect(limited.stats.splits).toEqual([{ seq: 4, cause: "context-drift", compared_with: 0 }]);
    expect(limited.traces.map((t) => t.call_context_drift)).toEqual([drift.slice(0, 4), [0, 0]]);
    const strict = rebuild(calls, "template-aware", { tokenizer, maxContextDrift: limit - 1 });
    expect(strict.stats.splits).toEqual([{ seq: 3, cause: "thinking-strip", compared_with: 0 }]);
  });
});

describe("retokenize takes each turn's logprobs from the call that sampled it", () => {
  test.each(["mini-thinking-on-vllm", "mini-thinking-on-tito", "mini-thinking-on-tito-splice", "pi-two-queries-thinking-on-vllm"])(
    "%s: a turn whose content starts with \\n\\n (header tokens [151644, 77091, 1406]) is found",
    (name) => {
      const { calls } = fixture(name);
      const last = calls.at(-1)!;
      const withNewlines = last.request.messages.filter((m) => m.role === "assistant" && m.content.startsWith("\n\n"));
      expect(withNewlines.length).toBeGreaterThan(0);
      const ids = tokenizer.encode(
        tokenizer.renderChat({ messages: last.request.messages, tools: last.request.tools, thinking: last.request.thinking, addGenerationPrompt: false }),
      );
      expect(ids.some((id, i) => id === 151644 && ids[i + 1] === 77091 && ids[i + 2] === 1406)).toBe(true);
      const result = rebuild(calls, "retokenize", { tokenizer });
      // Every turn of the one conversation is attributed to its own call, in order.
      expect(result.traces[0]!.calls).toEqual(calls.map((c) => c.seq));
    },
  );

  // Before the fix: codex [0,1,2,7,8,9,10], claude-code [2,1,3,6,7,8], qwen-code [1,2,3,8,9,10].
  test.each(["codex-compaction-thinking-on-vllm", "claude-code-compaction-thinking-on-vllm", "qwen-code-compaction-thinking-on-tito"])(
    "%s: the turns after the compaction come from the calls after it, not from earlier calls with the same text",
    (name) => {
      const { calls } = fixture(name);
      const finalConversation = rebuild(calls, "template-aware", { tokenizer }).traces.at(-1)!.calls;
      expect(finalConversation[0]!).toBeGreaterThan(0);
      const retok = rebuild(calls, "retokenize", { tokenizer });
      expect(retok.traces[0]!.calls).toEqual(finalConversation);
    },
    REBUILD_TIMEOUT_MS,
  );

  test("pi with a sub-agent: the main agent's turns never take the sub-agent's calls", () => {
    const { calls } = fixture("pi-subagent-thinking-on-vllm");
    const isSub = (c: RecordedCall) => c.request.messages[0]!.content.startsWith("You are a file-writing sub-agent.");
    expect(calls.filter(isSub).map((c) => c.seq)).toEqual([2, 3, 4, 5]);
    expect(rebuild(calls, "retokenize", { tokenizer }).traces[0]!.calls).toEqual([0, 1, 6, 7]);
  });

  test("a turn sampled by no call of this conversation is trainable without logprobs, not exactly sampled", () => {
    const { calls } = fixture("pi-subagent-thinking-on-vllm");
    // Without the main agent's first call, its turn has no source.
    const result = rebuild(
      calls.filter((c) => c.seq !== 0),
      "retokenize",
      { tokenizer },
    );
    expect(result.traces[0]!.calls).toEqual([1, 6, 7]);
    expect(checkSampledSpans(result.traces, calls, true).violations).toEqual([]);
    expect(result.stats.trainable_exactly_sampled).toBeLessThan(result.stats.trainable_tokens);
  });
});
