// Why: engines answer with token-id arrays as long as the whole context (100k+ ids per call);
// validating them element by element through zod costs more than the rest of the answer, so
// this schema checks them with one tight loop and still rejects anything that is not ids.
import { z } from "zod";

function isTokenIdArray(value: unknown): value is number[] {
  if (!Array.isArray(value)) return false;
  for (const id of value) if (typeof id !== "number" || !Number.isInteger(id) || id < 0) return false;
  return true;
}

/** An array of non-negative integer token ids. */
export const TokenIds = z.custom<number[]>(isTokenIdArray, { message: "expected an array of non-negative integer token ids" });

function isLogprobEntries(value: unknown): value is Array<{ logprob: number }> {
  if (!Array.isArray(value)) return false;
  for (const entry of value) if (typeof entry !== "object" || entry === null || typeof (entry as { logprob?: unknown }).logprob !== "number") return false;
  return true;
}

/** vLLM's `logprobs.content`: one `{logprob, …}` entry per sampled token (other fields unread). */
export const LogprobEntries = z.custom<Array<{ logprob: number }>>(isLogprobEntries, { message: "expected logprob entries {logprob: number}" });
