// Trajectory rebuilding on sessions recorded from the REAL harness CLIs (Pi, Qwen Code, Codex,
// Claude Code) run unchanged through the gateway against the scripted mock engine (real Qwen3
// tokenizer and chat template). For each CLI, a 5-shell-step task (6 calls) with the gateway
// forcing thinking on, then off:
//  - template-aware: exactly one trace for the agent's conversation, whose trainable tokens are
//    the recorded calls' sampled ids and logprobs (checked call by call, not only the stats);
//  - prefix-merge, thinking on: ONE trace too. Every CLI echoes the reasoning back and Qwen3's
//    template keeps `<think>` for assistant turns after the last user message, so in a
//    single-query run nothing is stripped. The strip is real once a second user query arrives
//    (Pi with two messages): then prefix-merge splits with cause thinking-strip;
//  - prefix-merge, thinking off: splits at every call on generation glue (the generation prompt's
//    `<think>\n\n</think>\n\n` is not in the history's rendering of that turn).
// Plus Pi spawning a real sub-agent (a nested `pi -p` from its bash tool) and Pi compacting.
// CLIs not installed (scripts/install-harnesses.sh) are skipped with a visible test name.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { RecordedCall } from "../protocol/calls.ts";
import { pinnedBinary } from "../node/harness/index.ts";
import { rebuild } from "../node/trajectory/index.ts";
import { expectEqualsLastCall, expectFaithfulMerge } from "./support/trajectory/faithfulness.ts";
import { qwen3Tokenizer } from "./support/trajectory/qwen3.ts";
import { CLI_MODEL, cliInstalled, type CliRunRequest, recordCliSession, REAL_CLIS, shellStepsScript, type RealCli } from "./helpers/record-cli-session.ts";
import { startStack, type Stack } from "./helpers/stack.ts";

const tokenizer = qwen3Tokenizer();
const STEPS = 5;
const TEST_TIMEOUT_MS = 120_000;
const INSTRUCTION = `Write the files f1.txt to f${STEPS}.txt with the shell, one command per file, then say Done.`;
const EXPECTED_FILES = Array.from({ length: STEPS }, (_, i) => `f${i + 1}.txt`);
const ALL_SEQS = Array.from({ length: STEPS + 1 }, (_, i) => i);

let thinkingOn: Stack;
let thinkingOff: Stack;
beforeAll(async () => {
  thinkingOn = await startStack({ engine: { script: shellStepsScript(STEPS), model: CLI_MODEL }, gateway: { thinking: true } });
  thinkingOff = await startStack({ engine: { script: shellStepsScript(STEPS), model: CLI_MODEL }, gateway: { thinking: false } });
}, TEST_TIMEOUT_MS);
afterAll(async () => {
  await thinkingOn?.stop();
  await thinkingOff?.stop();
}, TEST_TIMEOUT_MS);

/** `test`, or a visibly skipped test naming the missing CLI. */
function cliTest(cli: RealCli, name: string, body: () => Promise<void>): void {
  if (!cliInstalled(cli)) {
    console.warn(`[trajectories-real-cli] ${cli} not installed at ${pinnedBinary(cli)}: skipping "${name}"`);
    test.skip(`${name} [SKIPPED: ${cli} not installed — run scripts/install-harnesses.sh]`, () => {});
    return;
  }
  test(name, body, TEST_TIMEOUT_MS);
}

async function record(
  stack: Stack,
  cli: RealCli,
  extra: Omit<Partial<CliRunRequest>, "cli"> = {},
  expectedFiles: string[] = EXPECTED_FILES,
): Promise<RecordedCall[]> {
  const rec = await recordCliSession(stack, { cli, instruction: INSTRUCTION, ...extra });
  if (rec.run.exitCode !== 0) console.error(`${cli} failed:\n${rec.run.error ?? rec.run.stderr.slice(-2000)}`);
  expect(rec.run.exitCode).toBe(0);
  expect(rec.calls.every((c) => c.error === null && c.output_ids !== null)).toBe(true);
  for (const file of expectedFiles) expect(rec.workFiles).toContain(file);
  return rec.calls;
}

/** One template-aware trace holding every call, token-faithful to what the engine sampled. */
function expectOneFaithfulTrace(calls: RecordedCall[]): ReturnType<typeof rebuild> {
  const aware = rebuild(calls, "template-aware", { tokenizer });
  expect(aware.traces.map((t) => t.calls)).toEqual([calls.map((c) => c.seq)]);
  const trace = aware.traces[0]!;
  expectFaithfulMerge(trace, calls);
  // The trainable tokens, in order, are exactly the sampled ids of the calls, with their logprobs.
  const trainable = trace.response_ids.filter((_, i) => trace.loss_mask[i] === 1);
  expect(trainable).toEqual(calls.flatMap((c) => c.output_ids!));
  expect(trace.logprobs.filter((_, i) => trace.loss_mask[i] === 1)).toEqual(calls.flatMap((c) => c.logprobs!));
  expect(aware.stats.trainable_exactly_sampled).toBe(aware.stats.trainable_tokens);
  expect(aware.stats.trainable_tokens).toBe(trainable.length);
  expect(aware.stats.logprob_coverage).toBe(1);
  return aware;
}

describe("real CLIs: 5 shell steps, one query", () => {
  for (const cli of REAL_CLIS) {
    cliTest(cli, `${cli}, thinking on: one template-aware trace; prefix-merge does not split (reasoning echoed, kept after the last query)`, async () => {
      const calls = await record(thinkingOn, cli);
      expect(calls.map((c) => c.seq)).toEqual(ALL_SEQS);
      expect(calls.every((c) => c.request.thinking === true)).toBe(true);
      const aware = expectOneFaithfulTrace(calls);
      expect(Object.values(aware.stats.normalisations).every((n) => n === 0)).toBe(true);
      // Nothing normalised: every call saw exactly the trace's context.
      expect(aware.traces[0]!.call_context_drift).toEqual(calls.map(() => 0));

      // Why nothing breaks: the harness sends every earlier turn's reasoning back unchanged.
      const last = calls.at(-1)!;
      const echoed = last.request.messages.filter((m) => m.role === "assistant").map((m) => m.reasoning?.trim());
      expect(echoed).toEqual(calls.slice(0, -1).map((c) => c.response!.reasoning?.trim()));
      expect(echoed.every((r) => r !== undefined && r.startsWith("Step "))).toBe(true);

      const strict = rebuild(calls, "prefix-merge", { tokenizer });
      expect(strict.traces.map((t) => t.calls)).toEqual([ALL_SEQS]);
      expect(strict.stats.splits).toEqual([]);
      expectEqualsLastCall(strict.traces[0]!, calls);
    });

    cliTest(cli, `${cli}, thinking off: one template-aware trace; prefix-merge splits at every call on generation glue`, async () => {
      const calls = await record(thinkingOff, cli);
      expect(calls.map((c) => c.seq)).toEqual(ALL_SEQS);
      expect(calls.every((c) => c.request.thinking === false)).toBe(true);
      const aware = expectOneFaithfulTrace(calls);
      expect(aware.stats.normalisations).toEqual({
        "generation-glue": STEPS,
        "thinking-strip": 0,
        "volatile-text": 0,
        "tool-args-drift": 0,
        "tokenization-drift": 0,
      });
      // The glue kept after each earlier header: only the first call saw the trace's context.
      expect(aware.stats.context_exact_calls).toBe(1);
      expect(aware.traces[0]!.call_context_drift.slice(1).every((d) => d > 0)).toBe(true);
      const exactOnly = rebuild(calls, "template-aware", { tokenizer, maxContextDrift: 0 });
      expect(exactOnly.traces.map((t) => t.calls)).toEqual(ALL_SEQS.map((seq) => [seq]));

      const strict = rebuild(calls, "prefix-merge", { tokenizer });
      expect(strict.traces.map((t) => t.calls)).toEqual(ALL_SEQS.map((seq) => [seq]));
      expect(strict.stats.splits.map((s) => [s.seq, s.cause, s.compared_with])).toEqual(ALL_SEQS.slice(1).map((seq) => [seq, "generation-glue", seq - 1]));
      strict.traces.forEach((t) => expectEqualsLastCall(t, calls));
    });
  }
});

describe("real Pi: second query, sub-agent, compaction", () => {
  const shell = (i: number) => ({ think: `Writing f${i}.txt.`, shell: `printf 'line ${i}' > f${i}.txt` });

  cliTest("pi", "pi, thinking on, two queries: Qwen3 strips query 1's <think>; prefix-merge splits (thinking-strip), template-aware does not", async () => {
    const script = { steps: [shell(1), shell(2), shell(3), { think: "Part one is done.", text: "Part one done." }, shell(4), shell(5), shell(6)] };
    const stack = await startStack({ engine: { script, model: CLI_MODEL }, gateway: { thinking: true } });
    try {
      // Pi takes every positional argument as one user message, processed in turn.
      const calls = await record(
        stack,
        "pi",
        {
          instruction: "Part two: write f4.txt to f6.txt, then say Done.",
          options: { extraArgs: ["Part one: write f1.txt to f3.txt with the shell, one command per file."] },
        },
        ["f1.txt", "f2.txt", "f3.txt", "f4.txt", "f5.txt", "f6.txt"],
      );
      expect(calls.length).toBe(8);
      const secondQuery = calls.findIndex((c) => c.request.messages.filter((m) => m.role === "user").length === 2);
      expect(secondQuery).toBe(4);
      // The harness still echoes the reasoning; the template drops it before the last user turn.
      expect(calls[4]!.request.messages.filter((m) => m.role === "assistant").every((m) => m.reasoning !== undefined)).toBe(true);
      expect(tokenizer.decode(calls[4]!.prompt_ids!)).not.toContain("Writing f1.txt.");

      const strict = rebuild(calls, "prefix-merge", { tokenizer });
      expect(strict.traces.map((t) => t.calls)).toEqual([
        [0, 1, 2, 3],
        [4, 5, 6, 7],
      ]);
      expect(strict.stats.splits).toEqual([{ seq: 4, cause: "thinking-strip", compared_with: 0 }]);
      strict.traces.forEach((t) => expectFaithfulMerge(t, calls));

      const aware = expectOneFaithfulTrace(calls);
      expect(aware.stats.normalisations["thinking-strip"]).toBe(4);
      // Query 1's reasoning stays in the trace, though the engine no longer saw it from call 4 on.
      expect(aware.traces[0]!.call_context_drift.map((d) => d > 0)).toEqual([false, false, false, false, true, true, true, true]);
    } finally {
      await stack.stop();
    }
  });

  cliTest("pi", "pi spawning a real sub-agent (nested pi -p from its bash tool): one template-aware trace per conversation", async () => {
    // The nested pi inherits the bash tool's environment (same gateway session) and gets its own
    // system prompt; POLAR_SUBAGENT stops it from spawning again when it reaches the same step.
    const spawn = `[ -n "$POLAR_SUBAGENT" ] || POLAR_SUBAGENT=1 ${pinnedBinary("pi")} -p --offline --no-session --provider polar --model ${CLI_MODEL} --system-prompt 'You are a file-writing sub-agent.' 'Write f1.txt and f3.txt.'`;
    const script = { steps: [shell(1), { think: "Delegate to a sub-agent.", shell: spawn }, shell(3), { think: "All done.", text: "Done." }] };
    const stack = await startStack({ engine: { script, model: CLI_MODEL }, gateway: { thinking: true } });
    try {
      const calls = await record(stack, "pi", { instruction: "Write f1.txt, delegate to a sub-agent, write f3.txt, then say Done." }, ["f1.txt", "f3.txt"]);
      const isSub = (c: RecordedCall) => c.request.messages[0]!.content.startsWith("You are a file-writing sub-agent.");
      const mainSeqs = calls.filter((c) => !isSub(c)).map((c) => c.seq);
      const subSeqs = calls.filter(isSub).map((c) => c.seq);
      expect(mainSeqs).toEqual([0, 1, 6, 7]);
      expect(subSeqs).toEqual([2, 3, 4, 5]);

      for (const strategy of ["template-aware", "prefix-merge"] as const) {
        const result = rebuild(calls, strategy, { tokenizer });
        expect(result.traces.map((t) => t.calls)).toEqual([mainSeqs, subSeqs]);
        expect(result.stats.splits).toEqual([{ seq: 2, cause: "sub-agent", compared_with: 0 }]);
        result.traces.forEach((t) => expectFaithfulMerge(t, calls));
        expect(result.stats.trainable_exactly_sampled).toBe(result.stats.trainable_tokens);
        expect(result.stats.logprob_coverage).toBe(1);
      }
    } finally {
      await stack.stop();
    }
  });

  cliTest("pi", "pi compacting between two queries: summary calls and the compacted conversation are separate traces", async () => {
    // One big tool output (once: a marker file) pushes query 1 past Pi's threshold
    // (contextWindow 8000 − reserveTokens 4800); Pi compacts when the query ends, then query 2
    // runs on the summary. (After compaction the engine's turn index restarts at the kept turns.)
    const steps = Array.from({ length: 12 }, (_, i) =>
      i === 1 ? { think: "Big output.", shell: "[ -f .big ] || { touch .big; yes 'polar compaction filler line' | head -n 300; }" } : shell(i + 1),
    );
    const stack = await startStack({
      engine: { script: { steps: [...steps, { think: "Done.", text: "Done." }] }, model: CLI_MODEL },
      gateway: { thinking: true },
    });
    try {
      const calls = await record(
        stack,
        "pi",
        {
          instruction: "Part two: continue the steps.",
          options: { contextWindow: 8000, maxOutputTokens: 1024, extraArgs: ["Part one: run the scripted shell steps."] },
          extraSettings: { file: ".pi/agent/settings.json", merge: { compaction: { enabled: true, reserveTokens: 4800, keepRecentTokens: 150 } } },
        },
        [],
      );
      const isSummary = (c: RecordedCall) => c.request.messages[0]!.content.startsWith("You are a context summarization assistant");
      const isCompacted = (c: RecordedCall) =>
        !isSummary(c) && (c.request.messages[1]?.content ?? "").startsWith("The conversation history before this point was compacted");
      const before = calls.filter((c) => !isSummary(c) && !isCompacted(c)).map((c) => c.seq);
      const summaries = calls.filter(isSummary).map((c) => c.seq);
      const after = calls.filter(isCompacted).map((c) => c.seq);
      expect(before.length).toBe(13);
      expect(summaries.length).toBeGreaterThanOrEqual(1);
      expect(after.length).toBeGreaterThanOrEqual(1);
      expect(Math.max(...before)).toBeLessThan(Math.min(...summaries));
      expect(Math.max(...summaries)).toBeLessThan(Math.min(...after));

      const aware = rebuild(calls, "template-aware", { tokenizer });
      aware.traces.forEach((t) => expectFaithfulMerge(t, calls));
      expect(aware.stats.logprob_coverage).toBe(1);
      // The main conversation before and after compaction: one trace each, split as compaction.
      expect(aware.traces[0]!.calls).toEqual(before);
      expect(aware.traces.at(-1)!.calls).toEqual(after);
      const causeOf = new Map(aware.stats.splits.map((s) => [s.seq, s.cause]));
      expect(causeOf.get(after[0]!)).toBe("compaction");
      // The first summary request is another conversation (its own system prompt, no tools).
      expect(causeOf.get(summaries[0]!)).toBe("sub-agent");
      // Pi 0.73.1 sent its split-turn summary request twice, identical: the repeat's prompt
      // ends inside the first one's trace, which the strategy names "unknown".
      for (const seq of summaries.slice(1)) {
        expect(calls[seq]!.prompt_ids).toEqual(calls[summaries[0]!]!.prompt_ids);
        expect(causeOf.get(seq)).toBe("unknown");
      }
      expect(aware.traces.length).toBe(2 + summaries.length);
    } finally {
      await stack.stop();
    }
  });
});
