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

/** The coordinator's GET /health: 200 `ok`, or 503 while its store cannot write (a full disk; its writes are retried meanwhile). */
export const CoordinatorHealth = z.object({
  ok: z.boolean(),
  policy_version: z.number().int(),
  paused: z.boolean(),
  /** Nodes connected now. */
  nodes: z.number().int(),
  store: z.object({
    writable: z.boolean(),
    /** SQLite's code and words of the write being retried, e.g. "SQLITE_FULL: database or disk is full". */
    error: z.string().optional(),
    since: z.string().optional(),
  }),
});
export type CoordinatorHealth = z.infer<typeof CoordinatorHealth>;

/** `polar node`'s GET /health: 200 `ok`, or 503 `unhealthy` (and draining) while its store cannot write (a full disk). */
export const NodeHealth = z.object({
  status: z.enum(["ok", "unhealthy"]),
  node_id: z.string(),
  draining: z.boolean(),
  store: z.object({
    writable: z.boolean(),
    /** SQLite's code and words of the last failed write, e.g. "SQLITE_FULL: database or disk is full (saving a rollout result)". */
    error: z.string().optional(),
    since: z.string().optional(),
  }),
});
export type NodeHealth = z.infer<typeof NodeHealth>;

// ---- operators' view: dashboard snapshot, drill-down, events (node and coordinator alike) ----------

/** What a rollout's failure is attributed to (lib/result-facts.ts). */
export const FailureKind = z.enum(["none", "infrastructure", "agent", "evaluation", "capture", "cancelled"]);

/** One finished rollout as the dashboard charts it (also the `rollout.result` event of `/events`). */
export const DashboardResult = z.object({
  rollout_id: z.string(),
  /** The coordinator's group, or the node's task. */
  group_id: z.string().nullable(),
  task_id: z.string().nullable(),
  node_id: z.string().nullable(),
  status: z.string(),
  /** Null when nothing was measured (a masked result). */
  reward: z.number().nullable(),
  failure_kind: FailureKind,
  cause: z.string().nullable(),
  tokens: z.object({ prompt: z.number().int().nonnegative(), response: z.number().int().nonnegative(), trainable: z.number().int().nonnegative() }),
  /** Stage durations in seconds (queue, init, ready_queue, run, postrun_queue, postrun, sandbox_start, eval, e2e…), only those measured. */
  stage_seconds: z.record(z.string(), z.number().nonnegative()),
  /** Policy version when it was dispatched (null: not known, e.g. a standalone node's task). */
  policy_version_started: z.number().int().nullable(),
  /** The service's policy version when the result arrived. */
  policy_version: z.number().int(),
  /** policy_version − policy_version_started. */
  staleness: z.number().int().nullable(),
  /** Epoch ms. */
  at: z.number(),
});
export type DashboardResult = z.infer<typeof DashboardResult>;

/** A group (or a node's task) whose every rollout has a result (the `group.summary` event). */
export const DashboardGroup = z.object({
  group_id: z.string(),
  task_id: z.string(),
  status: z.string(),
  n: z.number().int().nonnegative(),
  /** Measured rewards of its results. */
  rewards: z.array(z.number()),
  mean_reward: z.number().nullable(),
  /** Population std of the rewards; 0 means GRPO gets no signal from the group. */
  reward_std: z.number().nullable(),
  policy_version: z.number().int(),
  at: z.number(),
});
export type DashboardGroup = z.infer<typeof DashboardGroup>;

/** An inference engine a node calls, with its calls in flight when the node can tell. */
export const DashboardEngine = z.object({ url: z.string(), in_flight: z.number().int().nonnegative().nullable() });

export const DashboardNode = z.object({
  node_id: z.string(),
  status: z.string(),
  slots: z.number().int().nonnegative(),
  /** Rollouts it holds now. */
  used: z.number().int().nonnegative(),
  load: z.object({ queued: z.number(), init: z.number(), ready: z.number(), run: z.number(), postrun: z.number() }).nullable(),
  warm_sandboxes: z.record(z.string(), z.number().int().nonnegative()),
  /** Sandboxes starting (a standalone node knows; the coordinator does not hear of it). */
  starting_sandboxes: z.record(z.string(), z.number().int().nonnegative()).nullable(),
  engines: z.array(DashboardEngine),
  /** LLM calls in flight through its gateway (null: not reported). */
  calls_in_flight: z.number().int().nonnegative().nullable(),
  gateway_calls: z.number().int().nonnegative(),
  gateway_mean_ms: z.number().nullable(),
});
export type DashboardNode = z.infer<typeof DashboardNode>;

export const DashboardTrainer = z.object({
  trainer_id: z.string(),
  connected: z.boolean(),
  credits: z.number().int(),
  unacked: z.number().int().nonnegative(),
  pending: z.number().int().nonnegative(),
});

/** A rollout not finished yet. */
export const DashboardActive = z.object({
  rollout_id: z.string(),
  group_id: z.string().nullable(),
  task_id: z.string().nullable(),
  state: z.string(),
  stage: z.string().nullable(),
  node_id: z.string().nullable(),
  policy_version_started: z.number().int().nullable(),
});

/** `GET /v1/admin/dashboard`: everything the page shows, once; `/events` keeps it current. */
export const DashboardSnapshot = z.object({
  service: z.enum(["coordinator", "node"]),
  service_id: z.string(),
  policy_version: z.number().int(),
  paused: z.boolean(),
  /** Rollouts by state (the coordinator's queued/assigned, a node's pipeline states). */
  queue: z.record(z.string(), z.number().int().nonnegative()),
  nodes: z.array(DashboardNode),
  trainers: z.array(DashboardTrainer),
  active: z.array(DashboardActive),
  /** Recent results, oldest first. */
  results: z.array(DashboardResult),
  /** Recently finished groups, oldest first. */
  groups: z.array(DashboardGroup),
  /** The `/events` id this snapshot reflects: read the feed from it with `Last-Event-ID`. */
  last_event_id: z.number().int().nonnegative(),
  at: z.number(),
});
export type DashboardSnapshot = z.infer<typeof DashboardSnapshot>;

/** One step of a rollout's timeline: a state or stage entered, at epoch ms. */
export const TimelineStep = z.object({ at: z.number(), state: z.string(), node_id: z.string().nullable() });

/** A stage's span within the rollout, from its SessionTiming (ms since it was queued on the node). */
export const StageSpan = z.object({ stage: z.string(), start_ms: z.number().nonnegative(), duration_ms: z.number().nonnegative() });

/** A chat message of the rollout's LLM calls, as the node's gateway recorded it. */
export const TranscriptMessage = z.object({ role: z.string(), content: z.string(), truncated: z.boolean() });

/** `GET /v1/admin/groups/:id` (coordinator), `GET /v1/admin/tasks/:id` (node). */
export const GroupDetail = z.object({
  group_id: z.string(),
  task_id: z.string(),
  state: z.string(),
  n: z.number().int().nonnegative(),
  trainer_id: z.string().nullable(),
  rollouts: z.array(
    z.object({
      rollout_id: z.string(),
      state: z.string(),
      node_id: z.string().nullable(),
      attempt: z.number().int().nonnegative(),
      status: z.string().nullable(),
      reward: z.number().nullable(),
      failure_kind: FailureKind.nullable(),
      cause: z.string().nullable(),
    }),
  ),
});
export type GroupDetail = z.infer<typeof GroupDetail>;

/** `GET /v1/admin/rollouts/:id`: the drill-down of one rollout. */
export const RolloutDetail = z.object({
  rollout_id: z.string(),
  group_id: z.string().nullable(),
  task_id: z.string().nullable(),
  state: z.string(),
  node_id: z.string().nullable(),
  /** The states and stages the service saw it enter (kept for recent rollouts only; may be empty). */
  timeline: z.array(TimelineStep),
  /** Its stages as the node measured them. */
  stages: z.array(StageSpan),
  /** The SessionResult as stored (traces with prompt_ids, response_ids, loss_mask, response_logprobs); null while it runs. */
  result: z.record(z.string(), z.unknown()).nullable(),
  /** The conversation of its last LLM call (null: not available here). */
  messages: z.array(TranscriptMessage).nullable(),
});
export type RolloutDetail = z.infer<typeof RolloutDetail>;

/** `POST /v1/admin/pause` on the coordinator: the cluster pauses (every node's gateway drains). */
export const ClusterPaused = z.object({ request_id: z.string(), nodes: z.number().int().nonnegative(), paused: z.boolean() });
export type ClusterPaused = z.infer<typeof ClusterPaused>;

/** One frame of `GET /events` (NVIDIA Polar's shape), after its `id:` line. */
export const FeedFrame = z.object({ type: z.string(), ts: z.string(), data: z.record(z.string(), z.unknown()) });
export type FeedFrame = z.infer<typeof FeedFrame>;
