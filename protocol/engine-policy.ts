// Why: the mock engine's trainable policy (examples/learn) is read and updated over HTTP by a
// trainer — `GET /polar/policy` for its architecture and weights, `POST /polar/policy` (bearer
// token) for a weight update — so its shapes are wire schemas like any other.
import { z } from "zod";

const logit = z.number().finite();
const pair = z.tuple([logit, logit]);

/** New weights: logits of [solve, mis-solve] are `bias + task_logits[task]` (missing tasks: 0). */
export const PolicyWeights = z
  .object({
    /** The policy version these weights are; never lower than the engine's current one. */
    version: z.number().int().nonnegative(),
    bias: pair,
    task_logits: z.record(z.string(), pair).default({}),
  })
  .strict();
export type PolicyWeights = z.infer<typeof PolicyWeights>;

/** One behaviour the policy chooses between, and the token that opens its word in the first reply. */
export const PolicyChoice = z.object({
  name: z.enum(["solve", "mis-solve"]),
  word: z.string(),
  token_id: z.number().int().nonnegative(),
});
export type PolicyChoice = z.infer<typeof PolicyChoice>;

/** `GET /polar/policy`: what a trainer needs to recompute the engine's logprobs. */
export const PolicyState = z.object({
  choices: z.array(PolicyChoice),
  /** Tasks the policy knows (ids from the engine's task file). */
  tasks: z.array(z.string()),
  weights: PolicyWeights,
});
export type PolicyState = z.infer<typeof PolicyState>;
