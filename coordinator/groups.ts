// Why: a group is n rollouts of one task; this module keeps what the coordinator must know of a
// running group to decide early stop and completion, and builds the task every member runs.
import { TaskRequest } from "../protocol/rollout.ts";
import { requestOverTask } from "../lib/task-catalog.ts";
import type { GroupSpec, InlineTask } from "../protocol/trainer-stream.ts";
import type { z } from "zod";
import type { GroupRow } from "./store/repo.ts";

export type AdvantageMode = GroupSpec["advantages"];

export interface Outcome {
  status: string;
  reward: number | null;
  usable: boolean;
}

export interface GroupState {
  id: string;
  trainerId: string | null;
  taskId: string;
  n: number;
  earlyStopMinUsable: number | null;
  advantages: AdvantageMode;
  callbackUrl: string | null;
  /** What each member runs (num_samples 1). */
  request: TaskRequest;
  members: string[];
  outcomes: Map<string, Outcome>;
  /** Early stop or cancellation asked: the rest are being cancelled. */
  stopping: boolean;
  cancelled: boolean;
}

export function groupFromRow(row: GroupRow, members: string[]): GroupState {
  return {
    id: row.id,
    trainerId: row.trainerId,
    taskId: row.taskId,
    n: row.n,
    earlyStopMinUsable: row.earlyStopMinUsable,
    advantages: row.advantages as AdvantageMode,
    callbackUrl: row.callbackUrl,
    request: TaskRequest.parse(row.request),
    members,
    outcomes: new Map(),
    stopping: false,
    cancelled: false,
  };
}

export function usableCount(group: GroupState): number {
  let n = 0;
  for (const o of group.outcomes.values()) if (o.usable) n++;
  return n;
}

export function isComplete(group: GroupState): boolean {
  return group.outcomes.size === group.n;
}

/** A trainer's group as the TaskRequest its members run. */
export function requestForGroup(spec: GroupSpec, task: z.infer<typeof InlineTask>): TaskRequest {
  return TaskRequest.parse(requestOverTask({ num_samples: 1, dispatch_priority: spec.priority, agent: spec.agent, builder: spec.builder, metadata: spec.metadata }, task));
}
