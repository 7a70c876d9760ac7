// Why: the drill-down shows a rollout's conversation. The node's gateway holds it (the recorded
// calls); the node hands a bounded copy — the messages of the session's last call and its answer,
// each message cut to a few KiB — along with the result it reports, as the result's typed
// `polar_transcript` (protocol/node-link.ts ReportedResult), which the coordinator stores with the
// result but never streams to trainers nor returns from the rollout API (both copy named fields
// only). Built and read here, for both services.
import type { TranscriptMessage } from "../protocol/admin.ts";
import type { z } from "zod";
import type { RecordedCall } from "../protocol/calls.ts";
import type { ReportedResult } from "../protocol/node-link.ts";

export type Transcript = z.infer<typeof TranscriptMessage>[];

/** Characters kept of one message, and messages kept (the last ones). */
export const TRANSCRIPT_LIMITS = { chars: 4000, messages: 200 };

function cut(text: string): { content: string; truncated: boolean } {
  return text.length > TRANSCRIPT_LIMITS.chars ? { content: text.slice(0, TRANSCRIPT_LIMITS.chars), truncated: true } : { content: text, truncated: false };
}

function render(m: { content: string; reasoning?: string; tool_calls?: { name: string; arguments: string }[] }): string {
  const parts = [m.reasoning ? `<think>${m.reasoning}</think>` : "", m.content, ...(m.tool_calls ?? []).map((t) => `[tool call ${t.name}] ${t.arguments}`)];
  return parts.filter(Boolean).join("\n");
}

/** The conversation of the last recorded call (with its answer); null without calls. */
export function buildTranscript(calls: readonly Pick<RecordedCall, "request" | "response">[]): Transcript | null {
  const last = calls.at(-1);
  if (!last) return null;
  const messages = last.request.messages.map((m) => ({ role: m.role, ...cut(render(m)) }));
  if (last.response) messages.push({ role: "assistant", ...cut(render(last.response)) });
  return messages.slice(-TRANSCRIPT_LIMITS.messages);
}

/** The transcript a stored result carries (parsed with it on arrival); null when it has none. */
export function transcriptOf(session: ReportedResult | null): Transcript | null {
  return session?.polar_transcript ?? null;
}
