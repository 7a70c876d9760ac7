// Why: a recorded LLM call is the unit every consumer reads (session API, trajectory rebuilding,
// trainers, the coordinator); defining its wire shape once keeps them all in agreement.
import { z } from "zod";
import { ChatRequest, ChatResponse } from "./chat.ts";
import { PolarErrorObject } from "./errors.ts";

export const DIALECTS = ["chat", "responses", "anthropic"] as const;
export const Dialect = z.enum(DIALECTS);
export type Dialect = z.infer<typeof Dialect>;

export const CallTimings = z.object({
  /** Waiting before the engine was called (pause for weight sync, routing). */
  queued_ms: z.number(),
  /** The engine call, retries included. */
  engine_ms: z.number(),
  /** From arrival to the call being recorded. */
  total_ms: z.number(),
});

/** Backend facts recorded with a call; every key is optional. */
export const CallNotes = z.object({
  /** Engine attempts, when more than one was needed. */
  attempts: z.number().int().positive().optional(),
  /** The backend cannot see tokens (`openai` backend). */
  text_only: z.boolean().optional(),
  /** Why the engine's token ids could not be used (the call is then text-only). */
  token_capture_error: z.string().optional(),
  /** The sampled text held a malformed tool call; it was returned as text. */
  tool_call_parse_error: z.string().optional(),
  /** Token splice (`tito --token-splice`): earlier assistant turns re-used as sampled ids. */
  token_splice: z.object({ used: z.number().int(), missed: z.number().int(), drift: z.number().int() }).optional(),
  /** SGLang's `meta_info.weight_version` of the weights that served the call. */
  weight_version: z.union([z.string(), z.number()]).optional(),
});
export type CallNotes = z.infer<typeof CallNotes>;

/** One LLM call a harness made through the gateway, as recorded and served. */
export const RecordedCall = z.object({
  session_id: z.string(),
  /** Order of arrival within the session, from 0. */
  seq: z.number().int().nonnegative(),
  /** The API the harness spoke. */
  dialect: Dialect,
  request: ChatRequest,
  /** Null when the call failed. */
  response: ChatResponse.nullable(),
  /** Null when the backend cannot see tokens (`openai` backend): the call is text-only. */
  prompt_ids: z.array(z.number().int()).nullable(),
  /** The ids the engine sampled. */
  output_ids: z.array(z.number().int()).nullable(),
  /** One logprob per output id, as the engine sent it. */
  logprobs: z.array(z.number()).nullable(),
  /** The engine that served the call; null when none answered. */
  engine_url: z.string().nullable(),
  /** Policy (weights) version the call was served under (`POST /v1/admin/resume`). */
  policy_version: z.number().int(),
  timings: CallTimings,
  error: PolarErrorObject.nullable(),
  /** Backend facts (tool-call parse failure, token splice used, …). */
  notes: CallNotes.nullable(),
  /** ISO 8601 time the call arrived. */
  started_at: z.string(),
});
export type RecordedCall = z.infer<typeof RecordedCall>;

/** `GET /v1/sessions/:id/calls`: every recorded call of a session, in seq order. */
export const SessionCalls = z.object({ session_id: z.string(), calls: z.array(RecordedCall) });
export type SessionCalls = z.infer<typeof SessionCalls>;
