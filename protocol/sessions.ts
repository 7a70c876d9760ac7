// Why: the gateway session API is called by node agents, tests and operators; its bodies are
// defined once here and parsed at the boundary.
import { z } from "zod";
import { TrajectoryResult } from "./trace.ts";

/** `POST /v1/sessions` body. */
export const CreateSessionBody = z.object({ metadata: z.record(z.string(), z.unknown()).optional() }).strict();

/** A gateway session: what a harness is pointed at, and how many calls it recorded. */
export const SessionInfo = z.object({
  id: z.string(),
  /** Present only in the creation response: the token is stored hashed. */
  token: z.string().optional(),
  /** Base URL for OpenAI clients (`…/v1`); with the token in its path when the token is shown. */
  openai_base_url: z.string(),
  /** Base URL for Anthropic clients. */
  anthropic_base_url: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  closed_at: z.string().nullable(),
  /** Calls recorded so far (the list: `GET /v1/sessions/:id/calls`). */
  call_count: z.number().int().nonnegative(),
});
export type SessionInfo = z.infer<typeof SessionInfo>;

/** `GET /v1/sessions/:id/trajectory`: the session's rebuilt traces. */
export const SessionTrajectory = TrajectoryResult.extend({ session_id: z.string() });
export type SessionTrajectory = z.infer<typeof SessionTrajectory>;

/** `DELETE /v1/sessions/:id`. */
export const DeletedSession = z.object({ id: z.string(), deleted: z.literal(true) });
export type DeletedSession = z.infer<typeof DeletedSession>;
