// Why: NeMo RL trains on one token sequence per response and asserts that each call's
// `prompt_token_ids` extends every earlier prompt + generation; a rollout's calls often are not
// one such sequence (sub-agents, compaction, chat templates that re-render history). The
// trajectory module already rebuilt them into traces; the main line is the trace holding the
// rollout's last call, and each of its calls gets a bundle cut from that trace — its sampled ids
// and logprobs, conditioned on the trace up to them — so the bundles extend each other by
// construction. Every other call is carried without a bundle, and says why.
import type { RecordedCall } from "../../protocol/calls.ts";
import type { GymTokenBundle, UNTRAINED_CALL_REASONS } from "../../protocol/gym.ts";
import type { Trace, TrajectoryResult } from "../../protocol/trace.ts";
import { PolarError } from "../../protocol/errors.ts";

export type UntrainedReason = (typeof UNTRAINED_CALL_REASONS)[number];

export interface CallBundle {
  bundle: GymTokenBundle;
  /** Tokens of `prompt_token_ids` unlike the prompt the engine saw (0: exactly it). */
  contextDrift: number;
}

export interface MainLine {
  /** Bundles by call seq. */
  bundles: Map<number, CallBundle>;
  /** Calls without a bundle, by seq. */
  untrained: Map<number, UntrainedReason>;
  traceCount: number;
}

/** The trace that holds the rollout's last rebuilt call: the line of calls that ended it. */
export function mainTrace(traces: readonly Trace[]): Trace | undefined {
  let best: Trace | undefined;
  let last = -1;
  for (const trace of traces) {
    const seq = trace.calls.at(-1) ?? -1;
    if (seq > last) {
      last = seq;
      best = trace;
    }
  }
  return best;
}

function sameIds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

/** Each call of `trace`: its sampled span in `trace.response_ids` (merge strategies append a call's whole output). */
function cutBundles(trace: Trace, bySeq: Map<number, RecordedCall>, into: MainLine): void {
  let cursor = 0;
  trace.calls.forEach((seq, k) => {
    const call = bySeq.get(seq);
    const output = call?.output_ids ?? [];
    if (!call || output.length === 0) {
      into.untrained.set(seq, "empty_generation");
      return;
    }
    let start = cursor;
    if (k > 0) while (start < trace.loss_mask.length && trace.loss_mask[start] === 0) start++;
    const span = trace.response_ids.slice(start, start + output.length);
    if (!sameIds(span, output) || trace.loss_mask.slice(start, start + output.length).some((m) => m !== 1)) {
      throw new PolarError("internal", `call ${seq}'s sampled ids are not where its trace puts them (strategy ${trace.strategy})`);
    }
    cursor = start + output.length;
    const logprobs = call.logprobs;
    if (!logprobs || logprobs.length !== output.length || !logprobs.every((lp) => Number.isFinite(lp))) {
      into.untrained.set(seq, "no_logprobs");
      return;
    }
    into.bundles.set(seq, {
      bundle: {
        prompt_token_ids: [...trace.prompt_ids, ...trace.response_ids.slice(0, start)],
        generation_token_ids: [...output],
        generation_log_probs: [...logprobs],
      },
      contextDrift: trace.call_context_drift[k] ?? 0,
    });
  });
}

/** Bundles for the main line of `trajectory` (a merge strategy's traces of `calls`). */
export function mainLineBundles(calls: readonly RecordedCall[], trajectory: TrajectoryResult | null): MainLine {
  const line: MainLine = { bundles: new Map(), untrained: new Map(), traceCount: trajectory?.traces.length ?? 0 };
  const bySeq = new Map(calls.map((c) => [c.seq, c]));
  const main = trajectory ? mainTrace(trajectory.traces) : undefined;
  if (main) cutBundles(main, bySeq, line);
  for (const call of calls) {
    if (line.bundles.has(call.seq) || line.untrained.has(call.seq)) continue;
    const reason: UntrainedReason =
      call.error !== null || call.response === null ? "failed" : call.prompt_ids === null || call.output_ids === null ? "text_only" : "off_main_line";
    line.untrained.set(call.seq, reason);
  }
  return line;
}
