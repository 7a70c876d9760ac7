// Why: a recorded LLM call is the unit every consumer reads (session API, trajectory rebuilding,
// trainers, the coordinator); defining its wire shape once keeps them all in agreement.
import { z } from "zod";
import { ChatRequest, ChatResponse } from "./chat.ts";

export const DIALECTS = ["chat", "responses", "anthropic"] as const;
export const Dialect = z.enum(DIALECTS);
export type Dialect = z.infer<typeof Dialect>;

export const CallTimings = z.object({
  /** Waiting before the engine was called (pause for weight sync, routing). */
  queuedMs: z.number(),
  engineMs: z.number(),
  totalMs: z.number(),
});

export const RecordedCall = z.object({
  sessionId: z.string(),
  seq: z.number().int().nonnegative(),
  dialect: Dialect,
  request: ChatRequest,
  /** Null when the call failed. */
  response: ChatResponse.nullable(),
  /** Null when the backend cannot see tokens (`openai` backend): the call is text-only. */
  promptIds: z.array(z.number().int()).nullable(),
  outputIds: z.array(z.number().int()).nullable(),
  logprobs: z.array(z.number()).nullable(),
  engineUrl: z.string().nullable(),
  policyVersion: z.number().int(),
  timings: CallTimings,
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  /** Backend facts (tool-call parse failure, token splice used, …). */
  notes: z.record(z.string(), z.unknown()).nullable(),
  startedAt: z.string(),
});
export type RecordedCall = z.infer<typeof RecordedCall>;
