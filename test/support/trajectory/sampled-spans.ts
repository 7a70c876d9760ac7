// Why: the property every strategy must keep, checked from the traces and the recorded calls
// alone (not from how the builder made them): every run of trainable tokens that carries a
// logprob is a contiguous run of one call's sampled ids with that call's logprobs, taken in the
// order of the trace's `calls`, and no call's sampled token is used twice in a rebuild.
import type { RecordedCall } from "../../../protocol/calls.ts";
import type { Trace } from "../../../protocol/trace.ts";

export interface SampledSpanReport {
  /** What breaks the property, one line each (empty: it holds). */
  violations: string[];
  /** Per trace, per entry of `calls`: response index of that call's first sampled token, or null. */
  spanStarts: (number | null)[][];
}

interface Cursor {
  /** Index into the trace's calls. */
  call: number;
  /** Next unread offset in that call's output. */
  offset: number;
}

/** Whether `run` is `outputs[at.call]` from `at.offset` (continuing into the next calls' outputs). */
function matchesAt(run: { ids: number[]; logprobs: number[] }, outputs: { ids: number[]; logprobs: number[] }[], at: Cursor): Cursor | null {
  let { call, offset } = at;
  for (let i = 0; i < run.ids.length; i++) {
    while (call < outputs.length && offset === outputs[call]!.ids.length) {
      call++;
      offset = 0;
    }
    const out = outputs[call];
    if (!out || out.ids[offset] !== run.ids[i] || out.logprobs[offset] !== run.logprobs[i]) return null;
    offset++;
  }
  return { call, offset };
}

/**
 * `allowUnsampled`: trainable tokens without a logprob are allowed (retokenize trains on the
 * re-rendered span; they must then not count as exactly sampled).
 */
export function checkSampledSpans(traces: readonly Trace[], calls: readonly RecordedCall[], allowUnsampled: boolean): SampledSpanReport {
  const bySeq = new Map(calls.map((c) => [c.seq, c]));
  const used = new Set<string>();
  const violations: string[] = [];
  const spanStarts: (number | null)[][] = [];
  traces.forEach((trace, t) => {
    const outputs = trace.calls.map((seq) => ({ ids: bySeq.get(seq)?.output_ids ?? [], logprobs: bySeq.get(seq)?.logprobs ?? [] }));
    const starts: (number | null)[] = trace.calls.map(() => null);
    let cursor: Cursor = { call: 0, offset: 0 };
    let sampled = 0;
    for (let p = 0; p < trace.response_ids.length;) {
      const lp = trace.logprobs[p];
      if (trace.loss_mask[p] === 0 || lp === null || lp === undefined) {
        if (trace.loss_mask[p] === 0 && lp !== null) violations.push(`trace ${t}: masked token at ${p} carries a logprob`);
        if (trace.loss_mask[p] === 1 && !allowUnsampled) violations.push(`trace ${t}: trainable token at ${p} has no logprob`);
        p++;
        continue;
      }
      const start = p;
      const run = { ids: [] as number[], logprobs: [] as number[] };
      for (; p < trace.response_ids.length && trace.loss_mask[p] === 1 && trace.logprobs[p] !== null; p++) {
        run.ids.push(trace.response_ids[p]!);
        run.logprobs.push(trace.logprobs[p]!);
      }
      // The first place, from the cursor on, where the run is a contiguous piece of the outputs.
      let found: { from: Cursor; to: Cursor } | undefined;
      for (let c = cursor.call; c < outputs.length && !found; c++) {
        for (let o = c === cursor.call ? cursor.offset : 0; o < outputs[c]!.ids.length && !found; o++) {
          const to = matchesAt(run, outputs, { call: c, offset: o });
          if (to) found = { from: { call: c, offset: o }, to };
        }
      }
      if (!found) {
        violations.push(`trace ${t}: the ${run.ids.length} tokens at ${start} are no contiguous run of a call's output ids with its logprobs`);
        continue;
      }
      let at = { ...found.from };
      for (let i = 0; i < run.ids.length; i++) {
        while (at.offset === outputs[at.call]!.ids.length) at = { call: at.call + 1, offset: 0 };
        const key = `${trace.calls[at.call]}:${at.offset}`;
        if (used.has(key)) violations.push(`trace ${t}: sampled token ${at.offset} of call ${trace.calls[at.call]} is used twice`);
        used.add(key);
        if (starts[at.call] === null) starts[at.call] = start + i;
        at.offset++;
      }
      cursor = found.to;
      sampled += run.ids.length;
    }
    if (trace.stats.trainable_exactly_sampled !== sampled) {
      violations.push(`trace ${t}: stats say ${trace.stats.trainable_exactly_sampled} exactly sampled, ${sampled} are`);
    }
    spanStarts.push(starts);
  });
  return { violations, spanStarts };
}
