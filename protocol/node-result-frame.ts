// Why: a node reports a finished session as one binary trace frame when its coordinator accepts
// them (`trace_frames` in the welcome): the `result` message as the header, its traces without
// their token arrays, and the arrays packed after it (protocol/trace-frame.ts), so the
// coordinator stores and forwards them without parsing them. Built here for every node.
import type { ReportedResult } from "./node-link.ts";
import { encodeTraceFrame, packTraces } from "./trace-frame.ts";

/** The trace frame of a `result` message; null when its arrays cannot be packed exactly (send JSON). */
export function nodeResultFrame(rolloutId: string, attempt: number, result: ReportedResult): Uint8Array | null {
  const packed = packTraces(result.trajectory.traces as Record<string, unknown>[]);
  if (!packed) return null;
  const header = { type: "result", rollout_id: rolloutId, attempt, result: { ...result, trajectory: { ...result.trajectory, traces: packed.rest } } };
  return encodeTraceFrame(header, packed.blob);
}
