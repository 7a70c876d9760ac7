// Why: one validated place for the mock engine's settings and their defaults, shared by the
// in-process factory (tests) and the CLI (`polar mock-engine`).
import { z } from "zod";
import { Script } from "./script.ts";

/** The engine HTTP APIs the mock speaks (not protocol's client dialects chat|responses|anthropic). */
export const ENGINE_APIS = ["vllm", "sglang"] as const;
export type EngineApi = (typeof ENGINE_APIS)[number];

export const MockEngineOptionsSchema = z
  .object({
    host: z.string().default("127.0.0.1"),
    /** 0 = any free port. */
    port: z.number().int().min(0).max(65535).default(8000),
    /** Served model name (what /v1/models lists and responses carry). */
    model: z.string().default("Qwen/Qwen3-8B"),
    /** HF model folder for tokenizer + chat template; default: the bundled Qwen3 one. */
    modelFolder: z.string().optional(),
    maxModelLen: z.number().int().positive().default(40960),
    /** Engine seed; combined with each request's `seed` for the pseudo-random logprobs. */
    seed: z.number().int().default(0),
    script: Script.optional(),
    /** A task file (JSONL): prompts holding one of its problem statements get the task-solving policy. */
    tasks: z.string().optional(),
    /** Chance that a task session applies the gold patch rather than a wrong fix. */
    successProbability: z.number().min(0).max(1).default(0.5),
    /** Delay before the first token. */
    ttftMs: z.number().min(0).default(0),
    /** Delay per generated token. */
    msPerToken: z.number().min(0).default(0),
    /** The first N generation calls answer HTTP 500. */
    failFirst: z.number().int().min(0).default(0),
    /** 1-based generation call numbers that never answer (the client must time out). */
    hangCalls: z.array(z.number().int().positive()).default([]),
    /** The engine API to speak (ENGINE_APIS); the option keeps its CLI name `--dialect`. */
    dialect: z.enum(ENGINE_APIS).default("vllm"),
    /**
     * Task sessions choose solve / mis-solve from trainable logits (trainable-policy.ts) that start
     * at `successProbability`; `GET /polar/policy` and `POST /polar/policy` read and update them.
     */
    trainable: z.boolean().default(false),
    /** Bearer token for `POST /polar/policy` (required with `trainable`). */
    policyToken: z.string().min(16).optional(),
  })
  .refine((o) => !o.trainable || (o.tasks !== undefined && o.policyToken !== undefined), {
    message: "a trainable policy needs a task file (tasks) and a policy token (policyToken, at least 16 characters)",
    path: ["trainable"],
  });
export type MockEngineOptions = z.infer<typeof MockEngineOptionsSchema>;
export type MockEngineOptionsInput = z.input<typeof MockEngineOptionsSchema>;
