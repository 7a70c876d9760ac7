// Why: trainers talk to the coordinator over one WebSocket (`/v1/trainer`): groups in, results
// out under credit-based flow control with acknowledgements. Every frame is one of these schemas,
// shared by the coordinator and the TypeScript client.
import { z } from "zod";
import { WsErrorFrame } from "./errors.ts";
import { AgentSpec, EvaluatorSpec, RolloutResultStatus, RolloutTrace, StrategySpec, TaskMetadata } from "./rollout.ts";
import { RuntimeSpec } from "./runtime.ts";
import { TaskStatsAnswer, TaskStatsQuery } from "./task-stats.ts";
import { TraceEncoding } from "./trace-frame.ts";

export const TRAINER_PROTOCOL_VERSION = 1;

/** An inline task: what a TaskRequest says about the work itself. */
export const InlineTask = z.looseObject({
  task_id: z.string().min(1),
  instruction: z.string(),
  runtime: RuntimeSpec.nullable().optional(),
  evaluator: EvaluatorSpec.nullable().optional(),
  timeout_seconds: z.number().positive().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

export const ADVANTAGE_MODES = ["none", "mean", "mean_std"] as const;

export const REPLACE_FLAT_SOURCES = ["same_task", "next_task"] as const;

/** What the coordinator does with a flat group (dynamic sampling): start a fresh one in its place, within a bound. */
export const ReplaceFlat = z
  .object({
    /** Fresh groups started, at most, for one submitted group (a replacement that is flat again is replaced again). */
    max_replacements: z.number().int().min(1).max(64),
    /** `same_task`: the same task again; `next_task`: the next task of `tasks`, in order. */
    source: z.enum(REPLACE_FLAT_SOURCES).default("same_task"),
    /** Tasks for `next_task` (ids of the coordinator's task file, or inline): the first replacement runs the first one. */
    tasks: z
      .array(z.union([InlineTask, z.string().min(1)]))
      .min(1)
      .max(64)
      .optional(),
  })
  .refine((r) => (r.source === "next_task") === (r.tasks !== undefined), {
    message: "tasks is required with source next_task, and only with it",
    path: ["tasks"],
  });
export type ReplaceFlat = z.infer<typeof ReplaceFlat>;

/** How a group ends: every member has a result, or it was cancelled (Polar's task status words). */
export const GROUP_END_STATUSES = ["completed", "cancelled"] as const;
export type GroupEndStatus = (typeof GROUP_END_STATUSES)[number];

export const REPLACEMENT_EXHAUSTED_REASONS = ["max_replacements", "no_more_tasks", "task_not_found"] as const;

export const GroupSpec = z
  .object({
    /** An inline task, or the id of a task in the coordinator's loaded task file. */
    task: z.union([InlineTask, z.string().min(1)]),
    n: z.number().int().min(1).max(4096),
    agent: AgentSpec,
    builder: StrategySpec.optional(),
    priority: z.number().int().min(0).max(100).default(0),
    metadata: TaskMetadata.default({}),
    /** Finish once this many results are usable; the rest are cancelled. */
    early_stop_min_usable: z.number().int().min(1).optional(),
    /** A `group` message with GRPO advantages when the group completes. */
    advantages: z.enum(ADVANTAGE_MODES).default("mean"),
    /**
     * A completed group whose reward std (population, over its rewards) is at or below this is
     * `flat` in its `group` message: 0 flags groups whose rewards are all equal (DAPO's rule).
     * Without it a group is flat only when all its rewards are equal.
     */
    min_reward_std: z.number().nonnegative().finite().optional(),
    /** Replace a flat group by a fresh one (its `group` message still comes, with `replaced_by`). */
    replace_flat: ReplaceFlat.optional(),
  })
  .refine((g) => g.early_stop_min_usable === undefined || g.early_stop_min_usable <= g.n, {
    message: "early_stop_min_usable cannot exceed n",
    path: ["early_stop_min_usable"],
  });
export type GroupSpec = z.infer<typeof GroupSpec>;
export type GroupSpecInput = z.input<typeof GroupSpec>;

/** One finished rollout as a trainer receives it. */
export const StreamedResult = z.object({
  result_id: z.string(),
  group_id: z.string(),
  rollout_id: z.string(),
  status: RolloutResultStatus,
  reward: z.number().nullable(),
  /** Polar's traces, as the node reported them in its SessionResult. */
  traces: z.array(RolloutTrace),
  /** Policy version the rollout started at, and the versions its calls were sampled with. */
  policy_version_started: z.number().int(),
  policy_versions: z.array(z.number().int()),
  /** Started more than max_staleness versions before the version current when it finished. */
  stale: z.boolean(),
  timing: z.record(z.string(), z.number()),
  node_id: z.string().nullable(),
  error: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
});
export type StreamedResult = z.infer<typeof StreamedResult>;

export const TrainerToCoordinator = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("hello"),
    protocol_version: z.number().int(),
    trainer_id: z.string().min(1).max(128),
    /** The secret the coordinator issued at this trainer id's first hello (required once issued). */
    trainer_secret: z.string().min(1).max(256).optional(),
    encoding: TraceEncoding.default("json"),
  }),
  z.object({ type: z.literal("submit"), request_id: z.string(), group: GroupSpec }),
  /** Grants `n` more results. */
  z.object({ type: z.literal("credit"), n: z.number().int().min(1).max(1_000_000) }),
  z.object({ type: z.literal("ack"), result_ids: z.array(z.string()).min(1).max(100_000) }),
  z.object({ type: z.literal("cancel_group"), group_id: z.string() }),
  /** The trainer's current policy version (staleness is measured against it). */
  z.object({ type: z.literal("policy"), version: z.number().int().nonnegative() }),
  /** Hold new LLM calls on every node; answered by `paused` once all have drained. */
  z.object({ type: z.literal("pause"), request_id: z.string() }),
  z.object({ type: z.literal("resume"), version: z.number().int().nonnegative() }),
  /** Per-task pass rates, optionally ranked by distance to a target rate; answered by `task_stats`. */
  z.object({ type: z.literal("task_stats"), request_id: z.string(), ...TaskStatsQuery.shape }),
]);
export type TrainerToCoordinator = z.infer<typeof TrainerToCoordinator>;

export const CoordinatorToTrainer = z.discriminatedUnion("type", [
  /** `encoding`: what result frames will be (absent from coordinators older than trace frames: JSON). */
  z.object({
    type: z.literal("welcome"),
    protocol_version: z.number().int(),
    trainer_id: z.string(),
    policy_version: z.number().int(),
    unacked: z.number().int().nonnegative(),
    /** Only at the trainer id's first hello: keep it (across reconnects and restarts) and send it in every later hello. */
    trainer_secret: z.string().optional(),
    encoding: TraceEncoding.default("json"),
  }),
  z.object({ type: z.literal("submitted"), request_id: z.string(), group_id: z.string(), rollout_ids: z.array(z.string()) }),
  z.object({ type: z.literal("result"), result: StreamedResult }),
  z.object({
    type: z.literal("group"),
    group_id: z.string(),
    status: z.enum(GROUP_END_STATUSES),
    rollout_ids: z.array(z.string()),
    rewards: z.array(z.number().nullable()),
    /** Reward minus the group mean (divided by the std for `mean_std`); null where no reward. */
    advantages: z.array(z.number().nullable()),
    task_id: z.string(),
    /** Population std of the non-null `rewards`; null with fewer than two. */
    reward_std: z.number().nonnegative().nullable(),
    /** Completed with `reward_std` at or below the submit's `min_reward_std` (0 when not given): no GRPO signal. */
    flat: z.boolean(),
    /** 0 for a submitted group; k for the k-th replacement started for it. */
    replacement_index: z.number().int().nonnegative(),
    /** The flat group this one was started in place of (replace_flat). */
    replaces: z.string().nullable(),
    /** The fresh group started in place of this flat one. */
    replaced_by: z.string().nullable(),
    /** Flat, replacement asked, and none started: why (the bound reached, no task left, a task id no longer in the task file). */
    replacement_exhausted: z.enum(REPLACEMENT_EXHAUSTED_REASONS).nullable(),
  }),
  /** The answer to `task_stats`. */
  z.object({ type: z.literal("task_stats"), request_id: z.string(), ...TaskStatsAnswer.shape }),
  z.object({ type: z.literal("paused"), request_id: z.string(), nodes: z.number().int().nonnegative() }),
  z.object({ type: z.literal("resumed"), policy_version: z.number().int() }),
  WsErrorFrame,
]);
export type CoordinatorToTrainer = z.infer<typeof CoordinatorToTrainer>;
