// Why: tests must check traces against the recorded calls independently of how the builder
// produced them: every sampled segment is the call's output ids (mask 1, its logprobs) and every
// inserted segment is a suffix of that call's prompt (mask 0, null logprob).
import { expect } from "bun:test";
import type { RecordedCall } from "../../../protocol/calls.ts";
import type { Trace } from "../../../protocol/trace.ts";

export function expectFaithfulMerge(trace: Trace, calls: readonly RecordedCall[]): void {
  const bySeq = new Map(calls.map((c) => [c.seq, c]));
  const traceCalls = trace.calls.map((seq) => bySeq.get(seq)!);
  expect(trace.prompt_ids).toEqual(traceCalls[0]!.prompt_ids!);
  expect(trace.loss_mask.length).toBe(trace.response_ids.length);
  expect(trace.logprobs.length).toBe(trace.response_ids.length);
  let at = 0;
  traceCalls.forEach((call, i) => {
    if (i > 0) {
      const start = at;
      while (at < trace.loss_mask.length && trace.loss_mask[at] === 0) at++;
      const context = trace.response_ids.slice(start, at);
      const prompt = call.prompt_ids!;
      expect(prompt.slice(prompt.length - context.length)).toEqual(context);
      expect(trace.logprobs.slice(start, at).every((lp) => lp === null)).toBe(true);
    }
    const out = call.output_ids!;
    expect(trace.response_ids.slice(at, at + out.length)).toEqual(out);
    expect(trace.loss_mask.slice(at, at + out.length).every((m) => m === 1)).toBe(true);
    expect(trace.logprobs.slice(at, at + out.length)).toEqual(call.logprobs!);
    at += out.length;
  });
  expect(at).toBe(trace.response_ids.length);
  expect(trace.stats.trainable_exactly_sampled).toBe(trace.stats.trainable_tokens);
  expect(trace.stats.trainable_tokens).toBe(traceCalls.reduce((n, c) => n + c.output_ids!.length, 0));
}

/** A strict merge trace is exactly the last call's prompt followed by its output. */
export function expectEqualsLastCall(trace: Trace, calls: readonly RecordedCall[]): void {
  const last = calls.find((c) => c.seq === trace.calls.at(-1))!;
  expect([...trace.prompt_ids, ...trace.response_ids]).toEqual([...last.prompt_ids!, ...last.output_ids!]);
}
