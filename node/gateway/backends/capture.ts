// Why: backends that capture tokens share how a capture (or its absence) becomes usage counts and
// recorded notes, so a text-only fallback reads the same whichever engine produced it.
import type { CallNotes } from "../../../protocol/calls.ts";
import type { PivotUsage } from "../pivot.ts";
import type { TokenCapture } from "./backend.ts";

export type CaptureOutcome = TokenCapture | { problem: string };

/** Usage from the captured ids when present (exact), else from the engine's own counts. */
export function usageOf(capture: CaptureOutcome, engineUsage: { prompt_tokens: number; completion_tokens: number } | null | undefined): PivotUsage {
  if (!("problem" in capture)) return { prompt_tokens: capture.promptIds.length, completion_tokens: capture.outputIds.length };
  return { prompt_tokens: engineUsage?.prompt_tokens ?? 0, completion_tokens: engineUsage?.completion_tokens ?? 0 };
}

/** Notes worth recording: retries taken and a token capture that failed. Undefined when none. */
export function callNotes(attempts: number, capture: CaptureOutcome, extra?: CallNotes): CallNotes | undefined {
  const notes: CallNotes = { ...extra };
  if (attempts > 1) notes.attempts = attempts;
  if ("problem" in capture) notes.token_capture_error = capture.problem;
  return Object.keys(notes).length > 0 ? notes : undefined;
}
