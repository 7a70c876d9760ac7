// Why: evaluation details are stored and streamed to trainers; logs and patches are kept to a
// bounded size (the tail of a log, where failures are; the head of a patch) with the rest counted.
import type { BoundedText } from "../../protocol/evaluation.ts";

export const LOG_LIMIT_BYTES = 32 * 1024;
export const PATCH_LIMIT_BYTES = 256 * 1024;

function bytesOf(text: string | Uint8Array): Uint8Array {
  return typeof text === "string" ? new TextEncoder().encode(text) : text;
}

const decoder = new TextDecoder("utf-8", { fatal: false });

export function tailOf(text: string | Uint8Array, limit = LOG_LIMIT_BYTES): BoundedText {
  const bytes = bytesOf(text);
  if (bytes.length <= limit) return { text: decoder.decode(bytes), dropped_bytes: 0 };
  return { text: decoder.decode(bytes.subarray(bytes.length - limit)), dropped_bytes: bytes.length - limit };
}

export function headOf(text: string | Uint8Array, limit = PATCH_LIMIT_BYTES): BoundedText {
  const bytes = bytesOf(text);
  if (bytes.length <= limit) return { text: decoder.decode(bytes), dropped_bytes: 0 };
  return { text: decoder.decode(bytes.subarray(0, limit)), dropped_bytes: bytes.length - limit };
}

/** Output of one exec as one log: stdout then stderr, each tail-bounded. */
export function execLog(result: { stdout: string; stderr: string; stdout_dropped_bytes: number; stderr_dropped_bytes: number }): BoundedText {
  const joined = result.stderr ? `${result.stdout}${result.stdout.endsWith("\n") || !result.stdout ? "" : "\n"}${result.stderr}` : result.stdout;
  const bounded = tailOf(joined);
  return { text: bounded.text, dropped_bytes: bounded.dropped_bytes + result.stdout_dropped_bytes + result.stderr_dropped_bytes };
}
