// Why: the node agent and the coordinator talk over one WebSocket (`/v1/node`); every frame in
// either direction is one of these schemas, parsed on arrival, so neither side trusts the other's
// shapes. The protocol version is checked in the handshake.
import { z } from "zod";
import { WsErrorFrame } from "./errors.ts";
import { TranscriptMessage } from "./admin.ts";
import {
  ROLLOUT_RESULT_STATUSES,
  RolloutTraceHeader,
  RolloutTrajectory,
  SessionResult,
  STATUS_OF_TRAJECTORY_ISSUE,
  statusOfTrajectory,
  TaskRequest,
} from "./rollout.ts";

/**
 * 2: the hello lists `interrupted` assignments (a node restart cut them off; the coordinator
 * queues them again), and error frames carry a closed code and `retryable`.
 * 3: a result is the whole SessionResult; progress and held rollouts name the node's state in its
 * own words (`RUN`, `COMPLETED`), no longer lower-cased (`run`, `finished`).
 */
export const LINK_PROTOCOL_VERSION = 3;

/** The states of a rollout on a node (node/pipeline/states.ts holds the moves between them), ending as its result's status says. */
export const NODE_ROLLOUT_STATES = ["QUEUED", "INIT", "READY", "RUN", "POSTRUN", ...ROLLOUT_RESULT_STATUSES] as const;
export const NodeRolloutState = z.enum(NODE_ROLLOUT_STATES);
export type NodeRolloutState = z.infer<typeof NodeRolloutState>;

/** Per-stage worker counts a node offers (Polar's max_*_workers). */
export const StageCapacity = z.object({
  init: z.number().int().min(1),
  run: z.number().int().min(1),
  postrun: z.number().int().min(1),
});
export type StageCapacity = z.infer<typeof StageCapacity>;

/** Queued / in-flight rollouts per stage (Polar's NodeStageMetrics, summed as `total`). */
export const StageLoad = z.object({
  queued: z.number().int().nonnegative(),
  init: z.number().int().nonnegative(),
  ready: z.number().int().nonnegative(),
  run: z.number().int().nonnegative(),
  postrun: z.number().int().nonnegative(),
});
export type StageLoad = z.infer<typeof StageLoad>;

/** Gateway call latency a node saw since its last heartbeat. */
export const GatewayLatency = z.object({
  calls: z.number().int().nonnegative(),
  total_ms: z.number().nonnegative(),
  max_ms: z.number().nonnegative(),
});
export type GatewayLatency = z.infer<typeof GatewayLatency>;

/** A rollout a node holds: which attempt, and how far it got (a terminal state: its result is stored, and sent until acknowledged). */
export const HeldRollout = z.object({
  rollout_id: z.string(),
  attempt: z.number().int().min(1),
  state: NodeRolloutState,
});
export type HeldRollout = z.infer<typeof HeldRollout>;

/**
 * An assignment the node lost to its own restart (killed, or stopped while it ran): it has no
 * result to report and runs no more, so the coordinator queues it again with its attempt counted.
 */
export const InterruptedRollout = z.object({
  rollout_id: z.string(),
  attempt: z.number().int().min(1),
  /** Why, for the coordinator's log and the rollout's cause (e.g. "node_restarted"). */
  cause: z.string(),
});
export type InterruptedRollout = z.infer<typeof InterruptedRollout>;

/** What the coordinator asks a node to run: one session of a task (Polar's SessionDispatchRequest). */
export const Assignment = z.object({
  rollout_id: z.string(),
  attempt: z.number().int().min(1),
  group_id: z.string(),
  /** The task as Polar's TaskRequest with num_samples 1; the node runs it as session `rollout_id`. */
  request: TaskRequest,
  /** Task budget left, counted from INIT on the node. */
  remaining_timeout_seconds: z.number().positive(),
});
export type Assignment = z.infer<typeof Assignment>;

/**
 * A finished session as the node reports it: Polar's SessionResult under the coordinator's ids
 * (`session_id` is the coordinator's rollout id, `task_id` its task), stored by the coordinator
 * as parsed. `polar_transcript` is for the coordinator's drill-down only (lib/transcript.ts):
 * never streamed to trainers nor returned by the rollout API.
 */
export const ReportedResult = SessionResult.safeExtend({
  polar_transcript: z.array(TranscriptMessage).optional(),
});
export type ReportedResult = z.infer<typeof ReportedResult>;

/** A reported result as a trace frame's header carries it: its traces without their token arrays, which follow it packed. */
export const ReportedResultHeader = z
  .object({ ...ReportedResult.shape, trajectory: RolloutTrajectory.extend({ traces: z.array(RolloutTraceHeader) }) })
  .refine(statusOfTrajectory, STATUS_OF_TRAJECTORY_ISSUE);
export type ReportedResultHeader = z.infer<typeof ReportedResultHeader>;

/** The `result` message as a trace frame's header. */
export const NodeResultHeader = z.object({ type: z.literal("result"), rollout_id: z.string(), attempt: z.number().int().min(1), result: ReportedResultHeader });
export type NodeResultHeader = z.infer<typeof NodeResultHeader>;

export const NodeHello = z.object({
  type: z.literal("hello"),
  protocol_version: z.number().int(),
  node_id: z.string().min(1).max(128),
  version: z.string(),
  capacity: StageCapacity,
  harnesses: z.array(z.string()),
  images_warm: z.record(z.string(), z.number().int().nonnegative()),
  engines: z.array(z.string()),
  /** Rollouts the node still runs (after a blip or a restart of the coordinator). */
  held: z.array(HeldRollout),
  /** Assignments a restart of the node cut off (absent from a version 1 hello, which is refused). */
  interrupted: z.array(InterruptedRollout).default([]),
  /** The secret the coordinator issued at this node id's first registration (required once issued). */
  node_secret: z.string().min(1).max(256).optional(),
});
export type NodeHello = z.infer<typeof NodeHello>;

export const NodeToCoordinator = z.discriminatedUnion("type", [
  NodeHello,
  z.object({
    type: z.literal("heartbeat"),
    load: StageLoad,
    images_warm: z.record(z.string(), z.number().int().nonnegative()),
    gateway: GatewayLatency.optional(),
  }),
  z.object({ type: z.literal("progress"), rollout_id: z.string(), attempt: z.number().int().min(1), state: NodeRolloutState }),
  /**
   * Sent until acknowledged (the node keeps it in its store until then). As a trace frame, this is
   * its header: the traces without their token arrays, which follow packed.
   */
  z.object({ type: z.literal("result"), rollout_id: z.string(), attempt: z.number().int().min(1), result: ReportedResult }),
  /** Answer to `pause`: every in-flight LLM call has drained. */
  z.object({ type: z.literal("paused"), request_id: z.string(), policy_version: z.number().int() }),
  z.object({ type: z.literal("resumed"), policy_version: z.number().int() }),
]);
export type NodeToCoordinator = z.infer<typeof NodeToCoordinator>;

export const CoordinatorToNode = z.discriminatedUnion("type", [
  /** `trace_frames`: results may come as binary trace frames (protocol/trace-frame.ts); absent from older coordinators. */
  z.object({
    type: z.literal("welcome"),
    protocol_version: z.number().int(),
    node_id: z.string(),
    heartbeat_ms: z.number().int().positive(),
    policy_version: z.number().int(),
    /** Only at the node id's first registration: keep it (with the node's store) and send it in every later hello. */
    node_secret: z.string().optional(),
    trace_frames: z.boolean().default(false),
  }),
  z.object({ type: z.literal("assign"), assignment: Assignment }),
  z.object({ type: z.literal("cancel"), rollout_id: z.string(), attempt: z.number().int().min(1), reason: z.string() }),
  /** Finish running work, take no new. */
  z.object({ type: z.literal("drain") }),
  z.object({ type: z.literal("pause"), request_id: z.string() }),
  z.object({ type: z.literal("resume"), policy_version: z.number().int() }),
  /** The result is durable at the coordinator: the node may forget it. */
  z.object({ type: z.literal("result_ack"), rollout_id: z.string(), attempt: z.number().int().min(1) }),
  WsErrorFrame,
]);
export type CoordinatorToNode = z.infer<typeof CoordinatorToNode>;
