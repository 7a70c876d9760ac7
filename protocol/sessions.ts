// Why: the gateway session API is called by node agents, tests and operators; its bodies are
// defined once here and parsed at the boundary.
import { z } from "zod";

export const CreateSessionBody = z
  .object({ metadata: z.record(z.string(), z.unknown()).optional() })
  .strict();

export const SessionInfo = z.object({
  id: z.string(),
  /** Present only in the creation response: the token is stored hashed. */
  token: z.string().optional(),
  openai_base_url: z.string(),
  anthropic_base_url: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  closed_at: z.string().nullable(),
  call_count: z.number().int(),
});
export type SessionInfo = z.infer<typeof SessionInfo>;
