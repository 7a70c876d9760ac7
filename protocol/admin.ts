// Why: the trainer's weight-sync handshake (pause, resume with a policy version) and the gateway's
// health are called by trainers, node agents and operators; their bodies are defined once here.
import { z } from "zod";

/** `POST /v1/admin/resume` body: the policy version later calls are stamped with. */
export const ResumeBody = z.object({ policy_version: z.number().int().nonnegative().optional() }).strict();
export type ResumeBody = z.infer<typeof ResumeBody>;

/** The byte budget every per-session cache of the gateway shares. */
export const CacheBudgetState = z.object({
  /** Estimated heap bytes the cached entries hold now. */
  used_bytes: z.number().int().nonnegative(),
  /** The budget: past it, the least recently used entry of any cache is evicted. */
  max_bytes: z.number().int().nonnegative(),
  /** Entries charged to the budget, all caches together. */
  entries: z.number().int().nonnegative(),
});
export type CacheBudgetState = z.infer<typeof CacheBudgetState>;

/** `GET /v1/admin/state`, and the answer to pause and resume. */
export const AdminState = z.object({
  paused: z.boolean(),
  /** Calls between the policy gate and their recording. */
  in_flight: z.number().int().nonnegative(),
  /** Calls held by a pause. */
  waiting: z.number().int().nonnegative(),
  policy_version: z.number().int(),
  cache: CacheBudgetState,
});
export type AdminState = z.infer<typeof AdminState>;

/** `GET /health`. */
export const Health = z.object({ ok: z.literal(true), policy_version: z.number().int(), paused: z.boolean() });
export type Health = z.infer<typeof Health>;
