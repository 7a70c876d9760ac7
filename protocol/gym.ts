// Why: NeMo Gym reaches Polar as one of its agent servers (`POST /run`, `POST /aggregate_metrics`)
// and NeMo RL trains on what `/run` answers; the shapes are Gym's pydantic models (nemo_gym/
// openai_utils.py, base_resources_server.py, config_types.py, failure_kinds.py), written once
// here so the routes, the tests and the docs agree with them and with each other.
import { z } from "zod";

// ---------------------------------------------------------------------------------------------
// The request: one dataset row as Gym's rollout collector sends it.
// ---------------------------------------------------------------------------------------------

/** A content part of an input message (`input_text` carries `text`; other types are kept as sent). */
export const GymInputContentPart = z.looseObject({ type: z.string(), text: z.string().optional() });

/** Gym's NeMoGymEasyInputMessage / NeMoGymMessage: the only input items Polar can hand a harness. */
export const GymInputMessage = z.looseObject({
  type: z.literal("message").optional(),
  role: z.enum(["user", "assistant", "system", "developer"]),
  content: z.union([z.string(), z.array(GymInputContentPart)]),
});

/** Any other Responses input item (function_call, reasoning, …): kept, each with its `type`. */
export const GymInputItem = z.union([GymInputMessage, z.looseObject({ type: z.string() })]);

const nullable = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

/**
 * NeMoGymResponseCreateParamsNonStreaming: Gym's copy of OpenAI's Responses create params, with
 * `extra="forbid"` — an unknown key is refused (422), as Gym refuses it.
 */
export const GymResponsesCreateParams = z
  .object({
    background: nullable(z.boolean()),
    include: nullable(z.array(z.string())),
    /** The prompt: a string, or a list of input items. */
    input: z.union([z.string(), z.array(GymInputItem)]),
    instructions: nullable(z.string()),
    max_output_tokens: nullable(z.number().int()),
    max_tool_calls: nullable(z.number().int()),
    metadata: nullable(z.record(z.string(), z.string())),
    model: nullable(z.string()),
    parallel_tool_calls: z.boolean().optional(),
    previous_response_id: nullable(z.string()),
    prompt: nullable(z.record(z.string(), z.unknown())),
    reasoning: nullable(z.record(z.string(), z.unknown())),
    service_tier: nullable(z.enum(["auto", "default", "flex", "scale", "priority"])),
    store: nullable(z.boolean()),
    temperature: nullable(z.number()),
    text: nullable(z.record(z.string(), z.unknown())),
    tool_choice: z.union([z.enum(["none", "auto", "required"]), z.looseObject({ type: z.string() })]).optional(),
    tools: z.array(z.looseObject({ type: z.string() })).optional(),
    top_logprobs: nullable(z.number().int()),
    top_p: nullable(z.number()),
    truncation: nullable(z.enum(["auto", "disabled"])),
    user: nullable(z.string()),
    stream: nullable(z.literal(false)),
  })
  .strict();
export type GymResponsesCreateParams = z.infer<typeof GymResponsesCreateParams>;

/** Gym's rollout id pattern (nemo_gym/rollout_correlation.py ROLLOUT_ID_PATTERN). */
export const GYM_ROLLOUT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * `POST /run`: a whole dataset row. Keys Gym's collector adds (`agent_ref`, `_ng_*`), NeMo RL's
 * `_rowidx` and every task field the dataset carries (`instance_id`, `verifier_metadata`, …) are
 * kept and echoed. Polar reads the task from `polar_task` (an inline task-file row) or names it by
 * `polar_task_id`, `task_id` or `instance_id` (a task of the node's task file).
 */
export const GymRunRequest = z.looseObject({
  responses_create_params: GymResponsesCreateParams,
  agent_ref: z.looseObject({ name: z.string(), type: z.string().optional() }).optional(),
  _ng_task_index: z.number().int().optional(),
  _ng_rollout_index: z.number().int().optional(),
  /** Re-dispatch attempt (0 on the first). */
  _ng_attempt_index: z.number().int().nonnegative().optional(),
  /** An explicit rollout identity (replaces "{task}-{rollout}"). */
  _ng_rollout_id: z.string().regex(GYM_ROLLOUT_ID_PATTERN, "letters, digits, '.', '_' and '-', starting with a letter or digit").optional(),
  /** NeMo RL's row index. */
  _rowidx: z.number().int().optional(),
  /** An inline task: a task-file row (instruction, runtime, evaluator, SWE-bench fields). */
  polar_task: z.record(z.string(), z.unknown()).optional(),
  /** The id of a task in the node's task file. */
  polar_task_id: z.string().min(1).optional(),
});
export type GymRunRequest = z.infer<typeof GymRunRequest>;

// ---------------------------------------------------------------------------------------------
// The answer: an OpenAI Response (NeMoGymResponse) with NeMo RL's token bundles.
// ---------------------------------------------------------------------------------------------

/**
 * TokenIDLogProbMixin: on the last output item of each model call. `prompt_token_ids` is everything
 * the call was conditioned on; NeMo RL requires each one to extend all earlier prompt + generation ids.
 */
export const GymTokenBundle = z.object({
  prompt_token_ids: z.array(z.number().int()),
  generation_token_ids: z.array(z.number().int()),
  /** One finite logprob per generated id. */
  generation_log_probs: z.array(z.number().finite()),
});
export type GymTokenBundle = z.infer<typeof GymTokenBundle>;

const bundleFields = GymTokenBundle.partial().shape;

export const GymReasoningItem = z.object({
  type: z.literal("reasoning"),
  id: z.string(),
  summary: z.array(z.object({ type: z.literal("summary_text"), text: z.string() })),
  ...bundleFields,
});

export const GymOutputMessage = z.object({
  type: z.literal("message"),
  id: z.string(),
  role: z.literal("assistant"),
  status: z.enum(["in_progress", "completed", "incomplete"]),
  content: z.array(z.object({ type: z.literal("output_text"), text: z.string(), annotations: z.array(z.unknown()) })),
  ...bundleFields,
});

export const GymFunctionCall = z.object({
  type: z.literal("function_call"),
  id: z.string(),
  call_id: z.string(),
  name: z.string(),
  /** JSON text of the arguments, as the model produced it. */
  arguments: z.string(),
  status: z.enum(["in_progress", "completed", "incomplete"]),
  ...bundleFields,
});

/** A tool result the harness sent back to the model. */
export const GymFunctionCallOutput = z.object({ type: z.literal("function_call_output"), call_id: z.string(), output: z.string() });

/** A later user turn the harness added (a second query, a compaction summary). */
export const GymUserMessage = z.object({
  type: z.literal("message"),
  role: z.literal("user"),
  content: z.array(z.object({ type: z.literal("input_text"), text: z.string() })),
});

export const GymOutputItem = z.union([GymReasoningItem, GymOutputMessage, GymFunctionCall, GymFunctionCallOutput, GymUserMessage]);
export type GymOutputItem = z.infer<typeof GymOutputItem>;

/** OpenAI's FunctionTool: the tools the harness offered the model. */
export const GymFunctionTool = z.object({
  type: z.literal("function"),
  name: z.string(),
  description: z.string().nullable(),
  parameters: z.record(z.string(), z.unknown()).nullable(),
  strict: z.boolean().nullable(),
});

/** NeMoGymResponseUsage; the detail counts are null (the engine does not report them). */
export const GymUsage = z.object({
  input_tokens: z.number().int().nonnegative(),
  input_tokens_details: z.object({ cached_tokens: z.number().int().nullable() }),
  output_tokens: z.number().int().nonnegative(),
  output_tokens_details: z.object({ reasoning_tokens: z.number().int().nullable() }),
  total_tokens: z.number().int().nonnegative(),
});

/** NeMoGymResponse (OpenAI's Response), rebuilt from the calls the gateway recorded. */
export const GymResponse = z.object({
  id: z.string(),
  object: z.literal("response"),
  /** Unix seconds. */
  created_at: z.number(),
  model: z.string(),
  status: z.enum(["completed", "incomplete", "failed"]),
  output: z.array(GymOutputItem),
  parallel_tool_calls: z.boolean(),
  tool_choice: z.union([z.enum(["none", "auto", "required"]), z.looseObject({ type: z.string() })]),
  tools: z.array(GymFunctionTool),
  usage: GymUsage,
  error: z.object({ code: z.literal("server_error"), message: z.string() }).nullable(),
  incomplete_details: z.null(),
  instructions: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  temperature: z.number().nullable(),
  top_p: z.number().nullable(),
});
export type GymResponse = z.infer<typeof GymResponse>;

// ---------------------------------------------------------------------------------------------
// Failure names: Gym's shared vocabulary (nemo_gym/failure_kinds.py) or `polar:<kind>`.
// ---------------------------------------------------------------------------------------------

/** The names of Gym's registry that Polar emits. */
export const GYM_FAILURE_KINDS = ["agent_timeout", "agent_run_error", "verifier_error", "provider_unavailable", "cancelled", "shutdown"] as const;

/** A Gym failure name, or `polar:<kind>` (Gym's `<server>:<kind>` extension). */
export const GymFailureKind = z.union([z.enum(GYM_FAILURE_KINDS), z.string().regex(/^polar:[a-z][a-z0-9_]*$/)]);
export type GymFailureKind = z.infer<typeof GymFailureKind>;

/** Why a model call of the rollout carries no token bundle. */
export const UNTRAINED_CALL_REASONS = ["off_main_line", "failed", "text_only", "empty_generation", "no_logprobs"] as const;

/** How the rollout's calls became the response's token bundles (docs/gym.md, "Contiguity"). */
export const GymTrajectoryDetail = z.object({
  strategy: z.enum(["prefix-merge", "template-aware"]),
  /** template-aware: the largest context drift a call may add and stay on a trace; null = no limit. */
  max_context_drift: z.number().int().nonnegative().nullable(),
  call_count: z.number().int().nonnegative(),
  trace_count: z.number().int().nonnegative(),
  /** Seq numbers of the calls that carry a token bundle, in order. */
  trained_calls: z.array(z.number().int().nonnegative()),
  untrained_calls: z.array(z.object({ seq: z.number().int().nonnegative(), reason: z.enum(UNTRAINED_CALL_REASONS) })),
  /** Where a new trace started and why (compaction, sub-agent, thinking-strip, …). */
  splits: z.array(z.object({ seq: z.number().int().nonnegative(), cause: z.string() })),
  /** Trained calls whose `prompt_token_ids` are exactly the prompt the engine saw. */
  context_exact_calls: z.number().int().nonnegative(),
  /** Tokens of trained prompts unlike what the engine saw (template-aware normalisations). */
  context_drift_tokens: z.number().int().nonnegative(),
});
export type GymTrajectoryDetail = z.infer<typeof GymTrajectoryDetail>;

/** Polar's own account of the rollout behind a `/run` answer. */
export const PolarRolloutDetail = z.object({
  /** Polar's session id of the rollout (its SessionResult). */
  rollout_id: z.string().nullable(),
  /** The gateway session that recorded its calls (`GET /v1/sessions/:id/calls` on the node); null when none opened. */
  gateway_session_id: z.string().nullable(),
  /** The task id Polar ran it under (one per `/run`). */
  polar_task_id: z.string(),
  /** The task it resolved from the row: a task-file id, or the inline task's id. */
  task_id: z.string(),
  /** Gym's identity of the rollout ("{task}-{rollout}[-a{attempt}]" or `_ng_rollout_id`). */
  gym_rollout_id: z.string().nullable(),
  harness: z.string(),
  model: z.string(),
  node_id: z.string().nullable(),
  /** Polar's session status word. */
  status: z.enum(["COMPLETED", "ERROR", "TIMEOUT"]),
  /** Whether the evaluator gave the reward (false: the reward is 0 because none could be given). */
  reward_given: z.boolean(),
  /** The evaluation, without its logs. */
  evaluation: z.record(z.string(), z.unknown()).nullable(),
  agent: z.object({ exit_code: z.number().int().nullable(), timed_out: z.boolean(), error: z.string().nullable() }).nullable(),
  /** Polar's failure cause and message, for infrastructure failures. */
  failure: z.object({ cause: z.string(), message: z.string() }).nullable(),
  /** Polar's SessionTiming (milliseconds). */
  timing: z.record(z.string(), z.unknown()),
  trajectory: GymTrajectoryDetail.nullable(),
});
export type PolarRolloutDetail = z.infer<typeof PolarRolloutDetail>;

/**
 * `POST /run`'s answer (Gym's BaseVerifyResponse): the request row echoed, plus the response, the
 * evaluation's reward, the mask NeMo RL reads (top level and `instance_config.mask_sample`), the
 * failure name and reason, and Polar's detail under `polar_rollout`. Infrastructure failures also
 * carry `_ng_failure_class` (Gym's collector files them apart and retries them on resume).
 */
export const GymRunResult = GymRunRequest.extend({
  response: GymResponse,
  reward: z.number().finite(),
  mask_sample: z.boolean(),
  instance_config: z.looseObject({ mask_sample: z.boolean() }),
  failure_kind: GymFailureKind.nullable(),
  failure_reason: z.string().nullable(),
  polar_rollout: PolarRolloutDetail,
  _ng_failure_class: GymFailureKind.optional(),
  /** Set when the node stopped mid-rollout (Gym's kill-shaped failures: re-dispatched, not stored). */
  _ng_no_persist: z.literal(true).optional(),
});
export type GymRunResult = z.infer<typeof GymRunResult>;

// ---------------------------------------------------------------------------------------------
// Aggregate metrics (nemo_gym/config_types.py AggregateMetricsRequest / AggregateMetrics).
// ---------------------------------------------------------------------------------------------

/** `POST /aggregate_metrics`: verify responses, which Gym strips of `response` (but its usage) and `responses_create_params`. */
export const GymAggregateMetricsRequest = z.object({ verify_responses: z.array(z.record(z.string(), z.unknown())) });

/** Flat string keys (Gym logs them to W&B / MLflow as they are). */
export const GymAggregateMetrics = z.object({
  group_level_metrics: z.array(z.record(z.string(), z.unknown())),
  agent_metrics: z.record(z.string(), z.unknown()),
  key_metrics: z.record(z.string(), z.unknown()),
});
export type GymAggregateMetrics = z.infer<typeof GymAggregateMetrics>;
