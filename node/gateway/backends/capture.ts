// Why: backends that capture tokens share how a capture (or its absence) becomes usage counts and
// recorded notes, so a text-only fallback reads the same whichever engine produced it.
import type { PivotUsage } from "../pivot.ts";
import type { TokenCapture } from "./backend.ts";

export type CaptureOutcome = TokenCapture | { problem: string };

/** Usage from the captured ids when present (exact), else from the engine's own counts. */
export function usageOf(
  capture: CaptureOutcome,
  engineUsage: { prompt_tokens: number; completion_tokens: number } | null | undefined,
): PivotUsage {
  if (!("problem" in capture)) return { promptTokens: capture.promptIds.length, completionTokens: capture.outputIds.length };
  return { promptTokens: engineUsage?.prompt_tokens ?? 0, completionTokens: engineUsage?.completion_tokens ?? 0 };
}

/** Notes worth recording: retries taken and a token capture that failed. Undefined when none. */
export function callNotes(attempts: number, capture: CaptureOutcome, extra?: Record<string, unknown>): Record<string, unknown> | undefined {
  const notes: Record<string, unknown> = { ...extra };
  if (attempts > 1) notes.attempts = attempts;
  if ("problem" in capture) notes.tokenCaptureError = capture.problem;
  return Object.keys(notes).length > 0 ? notes : undefined;
}
