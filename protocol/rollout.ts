// Why: Polar's rollout API (NVIDIA's Python rollout server) is what trainer integrations already
// speak; its request shapes are defined once here, with Polar's field names, and read by the
// node's HTTP API, task files and the coordinator.
import { z } from "zod";
import { RuntimeSpec } from "./runtime.ts";

/** Which harness runs, with what model name and settings (Polar's AgentSpec). */
export const AgentSpec = z.looseObject({
  harness: z.string().min(1),
  model_name: z.string().optional(),
  settings: z.record(z.string(), z.unknown()).default({}),
  env: z.record(z.string(), z.string()).default({}),
});
export type AgentSpec = z.infer<typeof AgentSpec>;

/** How recorded calls become traces (Polar's builder StrategySpec). */
export const StrategySpec = z.looseObject({
  strategy: z.string().min(1).default("per_request"),
  config: z.record(z.string(), z.unknown()).default({}),
});
export type StrategySpec = z.infer<typeof StrategySpec>;

/** How a finished session is scored (Polar's EvaluatorSpec). */
export const EvaluatorSpec = z.looseObject({
  strategy: z.string().min(1),
  config: z.record(z.string(), z.unknown()).default({}),
  env: z.record(z.string(), z.string()).default({}),
  /** Evaluate in a fresh sandbox of the task's image (Polar's default for SWE tasks). */
  refresh_runtime: z.boolean().optional(),
});
export type EvaluatorSpec = z.infer<typeof EvaluatorSpec>;

/** Metadata keys Polar's trainers set and read back from every result. */
export const TaskMetadata = z.looseObject({
  group_id: z.string().optional(),
  policy_version: z.number().int().optional(),
  rollout_step: z.number().int().optional(),
  /** Seconds the harness may run, counted from RUN (the task timeout counts from INIT). */
  agent_timeout: z.number().positive().finite().optional(),
});

/** A trainer's request for `num_samples` rollouts of one task (Polar's TaskRequest). */
export const TaskRequest = z
  .looseObject({
    task_id: z.string().min(1),
    instruction: z.string(),
    num_samples: z.number().int().min(1).default(1),
    dispatch_priority: z.number().int().min(0).max(100).default(0),
    early_stop_min_usable_sessions: z.number().int().min(1).nullable().optional(),
    timeout_seconds: z.number().positive().default(600),
    runtime: RuntimeSpec.nullable().optional(),
    agent: AgentSpec,
    builder: StrategySpec.default({ strategy: "per_request", config: {} }),
    evaluator: EvaluatorSpec.nullable().optional(),
    callback_url: z.string().url().nullable().optional(),
    metadata: TaskMetadata.default({}),
  })
  .refine((t) => t.early_stop_min_usable_sessions == null || t.early_stop_min_usable_sessions <= t.num_samples, {
    message: "early_stop_min_usable_sessions cannot exceed num_samples",
    path: ["early_stop_min_usable_sessions"],
  });
export type TaskRequest = z.infer<typeof TaskRequest>;
export type TaskRequestInput = z.input<typeof TaskRequest>;
