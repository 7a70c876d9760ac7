// Why: a group is n rollouts of one task; this module keeps what the coordinator must know of a
// running group to decide early stop, completion and what a flat one asked for, builds the task
// every member runs, and plans a new group (a submit, or a replacement for a flat one) as the
// rows to store and the state to hold once they are stored.
import { TaskRequest, type RolloutResultStatus } from "../protocol/rollout.ts";
import { requestOverTask } from "../lib/task-catalog.ts";
import { ReplaceFlat, type GroupSpec, type InlineTask } from "../protocol/trainer-stream.ts";
import type { z } from "zod";
import type { CoordinatorCore } from "./core.ts";
import type { GroupRow, GroupSamplingRow, NewGroupRow, NewGroupSamplingRow, NewRollout } from "./store/repo.ts";

export type AdvantageMode = GroupSpec["advantages"];

/** The submit's fields a member's request is built from, besides the task. */
export type RequestOverlay = Pick<GroupSpec, "priority" | "agent" | "builder" | "metadata">;

export interface Outcome {
  status: RolloutResultStatus;
  reward: number | null;
  usable: boolean;
}

/** What a group asked of a flat result (dynamic sampling) and where it sits in a chain of replacements. */
export interface GroupSampling {
  minRewardStd: number | null;
  replaceFlat: ReplaceFlat | null;
  /** With `next_task`: what every replacement runs over its task. */
  overlay: RequestOverlay | null;
  /** The submitted group the chain started from (the group itself when submitted). */
  rootGroupId: string;
  replaces: string | null;
  /** 0 for a submitted group, k for the k-th replacement of its chain. */
  replacementIndex: number;
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
  sampling: GroupSampling;
}

/** A group about to be accepted: a trainer's submit, a rollout API task, or a replacement. */
export interface NewGroup {
  trainerId: string | null;
  taskId: string;
  request: TaskRequest;
  n: number;
  earlyStopMinUsable: number | null;
  advantages: AdvantageMode;
  callbackUrl: string | null;
  /** Dynamic sampling the submit asked for (none for rollout API tasks). */
  sampling?: Pick<GroupSampling, "minRewardStd" | "replaceFlat" | "overlay">;
  /** Set for a replacement: the flat group it replaces and its place in the chain. */
  chain?: Pick<GroupSampling, "rootGroupId" | "replaces" | "replacementIndex">;
}

/** The rows a new group is stored as, and its state once they are. */
export interface PlannedGroup {
  state: GroupState;
  row: NewGroupRow;
  rollouts: NewRollout[];
  sampling: NewGroupSamplingRow;
}

export function planGroup(args: NewGroup, mint: { id(prefix: string): string; seq(): number }, now: number): PlannedGroup {
  const groupId = mint.id("grp");
  const image = args.request.runtime?.image ?? "default";
  const priority = args.request.dispatch_priority;
  const rollouts: NewRollout[] = [];
  for (let idx = 0; idx < args.n; idx++)
    rollouts.push({ id: mint.id("ro"), groupId, idx, seq: mint.seq(), state: "QUEUED", priority, image, attempt: 0, createdAt: now });
  const sampling: GroupSampling = {
    minRewardStd: args.sampling?.minRewardStd ?? null,
    replaceFlat: args.sampling?.replaceFlat ?? null,
    overlay: args.sampling?.overlay ?? null,
    rootGroupId: args.chain?.rootGroupId ?? groupId,
    replaces: args.chain?.replaces ?? null,
    replacementIndex: args.chain?.replacementIndex ?? 0,
  };
  const { trainerId, taskId, request, n, earlyStopMinUsable, advantages, callbackUrl } = args;
  return {
    state: {
      id: groupId,
      trainerId,
      taskId,
      request,
      n,
      earlyStopMinUsable,
      advantages,
      callbackUrl,
      members: rollouts.map((r) => r.id),
      outcomes: new Map(),
      stopping: false,
      cancelled: false,
      sampling,
    },
    row: {
      id: groupId,
      trainerId: args.trainerId,
      taskId: args.taskId,
      request: args.request,
      n: args.n,
      earlyStopMinUsable: args.earlyStopMinUsable,
      advantages: args.advantages,
      callbackUrl: args.callbackUrl,
      state: "running",
      createdAt: now,
    },
    rollouts,
    sampling: {
      groupId,
      minRewardStd: sampling.minRewardStd,
      replaceFlat: sampling.replaceFlat,
      overlay: sampling.overlay,
      rootGroupId: sampling.rootGroupId,
      replaces: sampling.replaces,
      replacementIndex: sampling.replacementIndex,
    },
  };
}

/** A stored group starts running: held, announced, its members queued. */
export function admitGroup(c: CoordinatorCore, planned: PlannedGroup, now: number): void {
  const { state: group, rollouts } = planned;
  c.groups.set(group.id, group);
  const priority = group.request.dispatch_priority;
  const image = group.request.runtime?.image ?? "default";
  c.events.emit("group.created", {
    group_id: group.id,
    task_id: group.taskId,
    trainer_id: group.trainerId,
    n: group.n,
    priority,
    image,
    rollout_ids: group.members,
    at: now,
  });
  for (const row of rollouts) {
    c.rollouts.add(
      {
        id: row.id,
        groupId: group.id,
        idx: row.idx,
        image,
        priority,
        seq: row.seq!,
        state: "QUEUED",
        nodeId: null,
        attempt: 0,
        policyVersionStarted: null,
        stage: null,
        since: now,
      },
      "submitted",
    );
  }
  c.scheduleDispatch();
}

export function groupFromRow(row: GroupRow, members: string[], sampling: GroupSamplingRow | undefined): GroupState {
  return {
    id: row.id,
    trainerId: row.trainerId,
    taskId: row.taskId,
    n: row.n,
    earlyStopMinUsable: row.earlyStopMinUsable,
    advantages: row.advantages,
    callbackUrl: row.callbackUrl,
    request: TaskRequest.parse(row.request),
    members,
    outcomes: new Map(),
    stopping: false,
    cancelled: false,
    sampling: {
      minRewardStd: sampling?.minRewardStd ?? null,
      replaceFlat: sampling?.replaceFlat ? ReplaceFlat.parse(sampling.replaceFlat) : null,
      overlay: sampling?.overlay ?? null,
      rootGroupId: sampling?.rootGroupId ?? row.id,
      replaces: sampling?.replaces ?? null,
      replacementIndex: sampling?.replacementIndex ?? 0,
    },
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
export function requestForGroup(spec: RequestOverlay, task: z.infer<typeof InlineTask>): TaskRequest {
  return TaskRequest.parse(
    requestOverTask({ num_samples: 1, dispatch_priority: spec.priority, agent: spec.agent, builder: spec.builder, metadata: spec.metadata }, task),
  );
}
