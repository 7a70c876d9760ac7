// Why: Polar's rollout API (NVIDIA's Python rollout server) is what trainer integrations already
// speak; its request shapes are defined once here, with Polar's field names, and read by the
// node's HTTP API, task files and the coordinator.
import { z } from "zod";
import { EvaluationRequirement } from "./evaluation.ts";
import { RuntimeSpec } from "./runtime.ts";

/** Which harness runs, with what model name and settings (Polar's AgentSpec). */
export const AgentSpec = z
  .looseObject({
    harness: z.string().min(1),
    model_name: z.string().optional(),
    settings: z.record(z.string(), z.unknown()).default({}),
    env: z.record(z.string(), z.string()).default({}),
  })
  .meta({ title: "AgentSpec" });
export type AgentSpec = z.infer<typeof AgentSpec>;

/** How recorded calls become traces (Polar's builder StrategySpec). */
export const StrategySpec = z
  .looseObject({
    strategy: z.string().min(1).default("per_request"),
    config: z.record(z.string(), z.unknown()).default({}),
  })
  .meta({ title: "StrategySpec" });
export type StrategySpec = z.infer<typeof StrategySpec>;

/** How a finished session is scored (Polar's EvaluatorSpec). */
export const EvaluatorSpec = z
  .looseObject({
    strategy: z.string().min(1),
    config: z.record(z.string(), z.unknown()).default({}),
    env: z.record(z.string(), z.string()).default({}),
    /** Evaluate in a fresh sandbox of the task's image (Polar's default for SWE tasks). */
    refresh_runtime: z.boolean().optional(),
    /** What the evaluation needs in its sandbox; derived from the evaluator's command when absent. */
    requires: z.array(EvaluationRequirement).optional(),
  })
  .meta({ title: "EvaluatorSpec" });
export type EvaluatorSpec = z.infer<typeof EvaluatorSpec>;

/**
 * A task's metadata: any JSON values (Polar's `dict[str, object]`), echoed back in every result
 * exactly as sent — NVIDIA's slime bridge stamps integer `group_id`, `policy_version` and
 * `rollout_step`. Only the key Polar itself reads is typed.
 */
export const TaskMetadata = z.looseObject({
  /** Seconds the harness may run, counted from RUN (the task timeout counts from INIT). */
  agent_timeout: z.number().positive().finite().optional(),
});

/**
 * Task ids: the characters and length of Polar's session ids (letters, digits, `.`, `_`, `-`;
 * at most 128), so an id is always a safe path segment, never a 1 MB URL; ids with `:` or `#`
 * stay free for the services' own records.
 */
export const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
export const TaskId = z.string().regex(TASK_ID_PATTERN, "letters, digits, '.', '_' and '-' only, starting with a letter or digit, at most 128");

/** Sessions one task may ask for: the trainer stream's bound on a group's n. */
export const MAX_NUM_SAMPLES = 4096;

const taskRequestFields = {
  task_id: z.string().min(1),
  instruction: z.string(),
  num_samples: z.number().int().min(1).max(MAX_NUM_SAMPLES).default(1),
  dispatch_priority: z.number().int().min(0).max(100).default(0),
  early_stop_min_usable_sessions: z.number().int().min(1).nullable().optional(),
  timeout_seconds: z.number().positive().default(600),
  runtime: RuntimeSpec.meta({ title: "RuntimeSpec" }).nullable().optional(),
  agent: AgentSpec,
  builder: StrategySpec.default({ strategy: "per_request", config: {} }),
  evaluator: EvaluatorSpec.nullable().optional(),
  callback_url: z.string().url().nullable().optional(),
  metadata: TaskMetadata.default({}),
};

// Polar's model validator: its error sits on the whole body, as pydantic reports it.
const earlyStopWithinSamples = (t: { early_stop_min_usable_sessions?: number | null; num_samples: number }) =>
  t.early_stop_min_usable_sessions == null || t.early_stop_min_usable_sessions <= t.num_samples;
const EARLY_STOP_MESSAGE = "early_stop_min_usable_sessions cannot exceed num_samples";

/** A trainer's request for `num_samples` rollouts of one task (Polar's TaskRequest). */
export const TaskRequest = z.looseObject(taskRequestFields).refine(earlyStopWithinSamples, { message: EARLY_STOP_MESSAGE }).meta({ title: "TaskRequest" });
/** What `POST /rollout/task/submit` accepts: a TaskRequest whose task_id is a TaskId. */
export const RolloutTaskRequest = z
  .looseObject({ ...taskRequestFields, task_id: TaskId })
  .refine(earlyStopWithinSamples, { message: EARLY_STOP_MESSAGE })
  .meta({ title: "TaskRequest" });
export type TaskRequest = z.infer<typeof TaskRequest>;
export type TaskRequestInput = z.input<typeof TaskRequest>;

// ---------------------------------------------------------------------------------------------
// Results: Polar's SessionResult, Trajectory, Trace, SessionTiming, TaskResult and TaskStatus.
// ---------------------------------------------------------------------------------------------

/** Polar's session status words; a result only ever carries a terminal one. */
export const SESSION_RESULT_STATUSES = ["COMPLETED", "ERROR", "TIMEOUT"] as const;
export const SessionResultStatus = z.enum(SESSION_RESULT_STATUSES);
export type SessionResultStatus = z.infer<typeof SessionResultStatus>;

export const ROLLOUT_RESULT_STATUSES = [...SESSION_RESULT_STATUSES, "CANCELLED"] as const;
/**
 * How a rollout ended, spelled the same on every hop — the node's pipeline, the coordinator's
 * store, the trainer stream: a session's status, or CANCELLED.
 */
export const RolloutResultStatus = z.enum(ROLLOUT_RESULT_STATUSES);
export type RolloutResultStatus = z.infer<typeof RolloutResultStatus>;

/** Task-level status words of Polar's rollout API. */
export const TASK_STATUSES = ["running", "completed", "failed", "cancelling", "cancelled"] as const;
export const TaskStatusWord = z.enum(TASK_STATUSES);
export type TaskStatusWord = z.infer<typeof TaskStatusWord>;

const ms = z.number().nonnegative().default(0);
const count = z.number().int().nonnegative().default(0);

/**
 * Per-session durations in milliseconds with exactly Polar's field names: its client models
 * forbid unknown keys, so anything else we measure goes in the result's metadata.
 */
export const SessionTiming = z
  .object({
    register_to_init_queue_ms: ms,
    rollout_dispatch_ms: ms,
    rollout_result_wait_ms: ms,
    rollout_pipeline_e2e_ms: ms,
    init_ms: ms,
    ready_queue_ms: ms,
    run_ms: ms,
    postrun_queue_ms: ms,
    postrun_ms: ms,
    container_start_ms: ms,
    eval_container_start_ms: ms,
    runtime_validation_ms: ms,
    eval_runtime_validation_ms: ms,
    prepare_ms: ms,
    eval_prepare_ms: ms,
    agent_setup_ms: ms,
    agent_exec_ms: ms,
    agent_postprocess_ms: ms,
    build_ms: ms,
    eval_ms: ms,
    postrun_exec_ms: ms,
    runtime_stop_ms: ms,
    e2e_ms: ms,
    runtime_exec_ms: ms,
    runtime_exec_count: count,
    runtime_exec_timeout_count: count,
    runtime_exec_failure_count: count,
    runtime_exec_exception_count: count,
    runtime_exec_cancelled_count: count,
    runtime_exec_ms_by_category: z.record(z.string(), z.number()).default({}),
    runtime_exec_count_by_category: z.record(z.string(), z.number().int()).default({}),
    mini_swe_command_ms: ms,
    mini_swe_command_count: count,
    mini_swe_command_timeout_count: count,
    mini_swe_command_failure_count: count,
    mini_swe_command_ms_by_category: z.record(z.string(), z.number()).default({}),
    mini_swe_command_count_by_category: z.record(z.string(), z.number().int()).default({}),
  })
  .strict();
export type SessionTiming = z.infer<typeof SessionTiming>;

/** The pipeline stages' durations a node measures for every rollout that ran (the coordinator sums them per stage). */
export const STAGE_TIMINGS = [
  "init_ms",
  "ready_queue_ms",
  "run_ms",
  "postrun_queue_ms",
  "postrun_ms",
  "container_start_ms",
  "prepare_ms",
  "agent_exec_ms",
  "build_ms",
  "eval_ms",
  "e2e_ms",
] as const satisfies readonly (keyof SessionTiming)[];
export type SessionTimingInput = z.input<typeof SessionTiming>;

/** Why a result must not be trained on (masked) or why it still may be (agent timeout). */
export const TRAINING_FILTER_REASONS = ["session_error", "session_timeout", "agent_timeout"] as const;
export const TrainingFilter = z.looseObject({
  masked: z.boolean(),
  reason: z.enum(TRAINING_FILTER_REASONS),
  trainable: z.boolean().optional(),
});
export type TrainingFilter = z.infer<typeof TrainingFilter>;

/**
 * A trace's per-token arrays, each checked in one loop: zod's per-element parse costs 20–60 ns a
 * number, and every result the coordinator parses carries 10⁵ of them (4 × 8192-token traces:
 * 7.6 ms a result that way, 0.6 ms this way, JSON.parse 1.2 ms; bench/result-parse.ts). Their
 * JSON Schema is given, as zod cannot derive it.
 */
const perToken = <T>(check: (v: unknown) => boolean, what: string, items: object) =>
  z.custom<T[]>((v) => Array.isArray(v) && v.every(check), `expected an array of ${what}`).meta({ type: "array", items });
const TokenIds = perToken<number>(Number.isInteger, "integers", { type: "integer" });
const LossMask = perToken<0 | 1>((m) => m === 0 || m === 1, "0s and 1s", { enum: [0, 1] });
const FiniteNumbers = perToken<number>(Number.isFinite, "finite numbers", { type: "number" });

/**
 * One training sequence as Polar's trainers read it. `response_logprobs` has one finite number
 * per response token: the engine's logprob where the token was sampled, 0.0 where the mask is 0.
 */
const RolloutTraceFields = z.object({
  prompt_ids: TokenIds,
  response_ids: TokenIds,
  loss_mask: LossMask,
  response_logprobs: FiniteNumbers,
  finish_reason: z.string().nullable(),
  reward: z.number().finite(),
  metadata: z.record(z.string(), z.unknown()).default({}),
});
export const RolloutTrace = RolloutTraceFields.refine(
  (t) => t.loss_mask.length === t.response_ids.length && t.response_logprobs.length === t.response_ids.length,
  {
    message: "loss_mask and response_logprobs must have one entry per response token",
    path: ["response_ids"],
  },
).refine((t) => t.loss_mask.every((m, i) => m === 1 || t.response_logprobs[i] === 0), {
  message: "response_logprobs must be 0.0 where loss_mask is 0",
  path: ["response_logprobs"],
});
export type RolloutTrace = z.infer<typeof RolloutTrace>;

/** A trace without its four per-token arrays: what a trace frame's header carries; the arrays follow it packed (protocol/trace-frame.ts). */
export const RolloutTraceHeader = RolloutTraceFields.omit({ prompt_ids: true, response_ids: true, loss_mask: true, response_logprobs: true }).strict();
export type RolloutTraceHeader = z.infer<typeof RolloutTraceHeader>;

/** Polar's Trajectory: the traces of one session and how it ended. */
export const RolloutTrajectory = z.object({
  status: SessionResultStatus,
  traces: z.array(RolloutTrace),
  metadata: z.record(z.string(), z.unknown()).default({}),
  error: z.string().nullable().default(null),
});
export type RolloutTrajectory = z.infer<typeof RolloutTrajectory>;

/** A result's rule, for SessionResult and the header variants built from its shape: `status` is `trajectory.status`. */
export const statusOfTrajectory = (r: { status: string; trajectory: { status: string } }): boolean => r.status === r.trajectory.status;
export const STATUS_OF_TRAJECTORY_ISSUE = { message: "status must equal trajectory.status", path: ["status"] };

/** One finished rollout (Polar's SessionResult); `status` always equals `trajectory.status`. */
export const SessionResult = z
  .object({
    session_id: z.string(),
    task_id: z.string(),
    status: SessionResultStatus,
    trajectory: RolloutTrajectory,
    timing: SessionTiming.default(SessionTiming.parse({})),
    node_id: z.string().nullable().default(null),
    error: z.string().nullable().default(null),
    /** The task's metadata echoed (group_id, policy_version, rollout_step) plus evaluation detail. */
    metadata: z.record(z.string(), z.unknown()).default({}),
  })
  .refine(statusOfTrajectory, STATUS_OF_TRAJECTORY_ISSUE);
export type SessionResult = z.infer<typeof SessionResult>;

/** What a task's callback_url receives once, when every session has resolved. */
export const TaskResult = z.object({
  task_id: z.string(),
  status: TaskStatusWord,
  results: z.array(SessionResult),
  result_paths: z.array(z.string()).default([]),
});
export type TaskResult = z.infer<typeof TaskResult>;

/** GET /rollout/task/{id}: a task that may still be running. */
export const TaskStatus = z.object({
  task_id: z.string(),
  status: TaskStatusWord,
  total_sessions: z.number().int().nonnegative(),
  completed_sessions: z.number().int().nonnegative(),
  results: z.array(SessionResult).default([]),
  result_paths: z.array(z.string()).default([]),
});
export type TaskStatus = z.infer<typeof TaskStatus>;

/** POST /rollout/task/submit's answer. */
export const TaskSubmitted = z.object({ task_id: z.string(), status: z.literal("running") });
export type TaskSubmitted = z.infer<typeof TaskSubmitted>;
