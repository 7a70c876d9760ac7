// Why: how rollouts end and groups complete — a node's result accepted only for the current
// attempt, a synthetic result for cancellations and spent attempts, early stop once enough are
// usable, and a group's completion once every member has exactly one result — judged flat or not,
// replaced when its submit asked, counted in its task's pass rate — decided here and stored
// (group-committed) before anyone is told.
import type { CoordinatorCore } from "./core.ts";
import { GroupCommit } from "./group-commit.ts";
import { groupRewards, judgeGroup, planReplacement, type ExhaustedReason, type Judgement } from "./dynamic-sampling.ts";
import { admitGroup, isComplete, planGroup, usableCount, type GroupState, type PlannedGroup } from "./groups.ts";
import { factsOfPacked, isUsablePacked, wholeResult, type PackedResult } from "./packed-results.ts";
import { resultTiming, sessionReward, streamedResult, syntheticErrorResult } from "./results.ts";
import type { LiveRollout, TerminalRolloutState } from "./rollout-states.ts";
import type { StoredResult } from "./store/repo.ts";
import { passRate } from "./task-stats.ts";

export class Outcomes {
  private readonly results: GroupCommit<StoredResult>;

  constructor(
    private readonly core: CoordinatorCore,
    /** Told after `group.finished` is emitted, with the group itself (the rollout API routes read it). */
    private readonly onGroupFinished: (group: GroupState) => void = () => {},
  ) {
    this.results = new GroupCommit<StoredResult>(
      (write) => core.persist(write),
      (batch) => core.repo.saveResults(batch, core.now()),
    );
  }

  /**
   * A node's result: accepted only from the node holding the current attempt; a late result
   * (reassigned or cancelled meanwhile) or a repeat is dropped. Resolves once the node may
   * forget it (the store has what it must keep).
   */
  async acceptResult(nodeId: string, rolloutId: string, attempt: number, packed: PackedResult): Promise<"accepted" | "dropped"> {
    const c = this.core;
    const rollout = c.rollouts.get(rolloutId);
    if (!rollout || rollout.state !== "ASSIGNED" || rollout.attempt !== attempt || rollout.nodeId !== nodeId) {
      c.events.emit("result.dropped", { rollout_id: rolloutId, node_id: nodeId, attempt, at: c.now() });
      // A repeat may race its first copy's write: the node forgets it only once that is durable.
      await c.persist(async () => undefined);
      return "dropped";
    }
    const result = packed.session;
    const timing = resultTiming(result);
    await this.finish(rollout, packed, result.status, result.error || null, timing);
    // Announced once stored (and the group's completion with it), as the node is told.
    c.events.emit("result.accepted", {
      rollout_id: rolloutId,
      group_id: rollout.groupId,
      node_id: nodeId,
      attempt,
      status: result.status,
      reward: sessionReward(result),
      timing,
      facts: factsOfPacked(packed),
      at: c.now(),
    });
    return "accepted";
  }

  /** Ends a rollout with its result (a node's, or synthetic for cancellations and spent attempts); `status` is its terminal state. */
  async finish(rollout: LiveRollout, packed: PackedResult, status: TerminalRolloutState, cause: string | null, timing?: Record<string, number>): Promise<void> {
    const c = this.core;
    const result = packed.session;
    const group = c.groups.get(rollout.groupId)!;
    c.rollouts.move(rollout, { to: status, cause, ...(timing && { timing }) });
    c.scheduleDispatch();
    const version = c.policyVersion();
    const started = rollout.policyVersionStarted ?? version;
    const stale = c.config.maxStaleness !== undefined && started < version - c.config.maxStaleness;
    const reward = sessionReward(result);
    group.outcomes.set(rollout.id, { status, reward, usable: status !== "CANCELLED" && isUsablePacked(packed) });
    await this.results.add({
      rolloutId: rollout.id,
      groupId: group.id,
      trainerId: group.trainerId,
      status,
      reward,
      session: result,
      traces: packed.traces,
      policyVersionStarted: started,
      stale,
      cause,
      acked: group.trainerId === null,
    });
    if (group.trainerId) {
      c.events.emit("result.ready", {
        trainer_id: group.trainerId,
        result: streamedResult({ result, status, groupId: group.id, rolloutId: rollout.id, policyVersionStarted: started, stale }),
        traces: packed.traces,
      });
    }
    c.events.emit("group.progressed", {
      group_id: group.id,
      task_id: group.taskId,
      trainer_id: group.trainerId,
      finished: group.outcomes.size,
      usable: usableCount(group),
      n: group.n,
      at: c.now(),
    });
    await this.afterOutcome(group);
  }

  /** Early stop once enough are usable; completion once every member has a result. */
  async afterOutcome(group: GroupState): Promise<void> {
    const c = this.core;
    if (!group.stopping && group.earlyStopMinUsable !== null && usableCount(group) >= group.earlyStopMinUsable) {
      await this.stopGroup(group, "early stop: enough usable results");
    }
    if (!isComplete(group) || !c.groups.has(group.id)) return;
    c.groups.delete(group.id);
    const status = group.cancelled ? "cancelled" : "completed";
    const now = c.now();
    const judged = judgeGroup(group, status);
    const plan = judged.flat ? planReplacement(group, (id) => c.tasks.get(id)) : null;
    const replacement = plan?.kind === "replace" ? this.replacementFor(group, plan.taskId, plan.request, now) : null;
    const scored = status === "completed" ? groupRewards(group).filter((r): r is number => r !== null) : [];
    const stats = c.taskStats.record(group.taskId, scored, judged.flat, now);
    await c.persist(() =>
      c.repo.completeGroup(
        {
          groupId: group.id,
          state: status,
          rewardStd: judged.rewardStd,
          flat: judged.flat,
          replacedBy: replacement?.state.id ?? null,
          replacementExhausted: plan?.kind === "exhausted" ? plan.reason : null,
          taskStats: stats,
          replacement: replacement && { group: replacement.row, members: replacement.rollouts, sampling: replacement.sampling },
        },
        now,
      ),
    );
    if (replacement) admitGroup(c, replacement, now);
    this.announceSampling(group, judged, replacement, plan?.kind === "exhausted" ? plan.reason : null, now);
    if (stats)
      c.events.emit("task.stats_updated", {
        task_id: stats.taskId,
        pass_rate: passRate(stats),
        mean_reward: stats.rewardSum / stats.weight,
        weight: stats.weight,
        groups: stats.groups,
        at: now,
      });
    c.events.emit("group.finished", {
      group_id: group.id,
      task_id: group.taskId,
      trainer_id: group.trainerId,
      status,
      n: group.n,
      usable: usableCount(group),
      callback_url: group.callbackUrl,
      at: now,
    });
    this.onGroupFinished(group);
  }

  /** The fresh group a flat one is replaced by: its submit's settings, the next link of its chain. */
  private replacementFor(flat: GroupState, taskId: string, request: GroupState["request"], now: number): PlannedGroup {
    const s = flat.sampling;
    return planGroup(
      {
        trainerId: flat.trainerId,
        taskId,
        request,
        n: flat.n,
        earlyStopMinUsable: flat.earlyStopMinUsable,
        advantages: flat.advantages,
        callbackUrl: flat.callbackUrl,
        sampling: { minRewardStd: s.minRewardStd, replaceFlat: s.replaceFlat, overlay: s.overlay },
        chain: { rootGroupId: s.rootGroupId, replaces: flat.id, replacementIndex: s.replacementIndex + 1 },
      },
      this.core.mint,
      now,
    );
  }

  private announceSampling(group: GroupState, judged: Judgement, replacement: PlannedGroup | null, exhausted: ExhaustedReason | null, now: number): void {
    const c = this.core;
    if (!judged.flat) return;
    const index = group.sampling.replacementIndex;
    c.events.emit("group.flat", {
      group_id: group.id,
      task_id: group.taskId,
      trainer_id: group.trainerId,
      reward_std: judged.rewardStd!,
      min_reward_std: judged.threshold,
      replacement_index: index,
      at: now,
    });
    if (replacement) {
      c.events.emit("group.replaced", {
        group_id: group.id,
        replacement_group_id: replacement.state.id,
        task_id: replacement.state.taskId,
        trainer_id: group.trainerId,
        replacement_index: index + 1,
        at: now,
      });
    } else if (exhausted) {
      c.events.emit("group.replacements_exhausted", {
        group_id: group.id,
        task_id: group.taskId,
        trainer_id: group.trainerId,
        root_group_id: group.sampling.rootGroupId,
        replacement_index: index,
        max_replacements: group.sampling.replaceFlat!.max_replacements,
        reason: exhausted,
        at: now,
      });
    }
  }

  /** Cancels every unfinished member: queued ones at once, running ones on their node too. */
  async stopGroup(group: GroupState, cause: string): Promise<void> {
    group.stopping = true;
    for (const id of group.members) {
      const rollout = this.core.rollouts.get(id);
      if (rollout) await this.cancelRollout(rollout, cause);
    }
  }

  async cancelGroup(group: GroupState, cause: string): Promise<void> {
    group.cancelled = true;
    await this.stopGroup(group, cause);
  }

  /** A rollout its node no longer runs, on its last allowed attempt: failed, masked, naming why. */
  async exhausted(rollout: LiveRollout, cause: string): Promise<void> {
    const c = this.core;
    const group = c.groups.get(rollout.groupId)!;
    c.events.emit("rollout.attempts_exhausted", {
      rollout_id: rollout.id,
      group_id: rollout.groupId,
      node_id: rollout.nodeId ?? "",
      attempt: rollout.attempt,
      cause,
      at: c.now(),
    });
    const result = syntheticErrorResult({
      sessionId: rollout.id,
      taskId: group.taskId,
      cause: `${cause}; no attempts left (${rollout.attempt})`,
      metadata: group.request.metadata,
    });
    await this.finish(rollout, wholeResult(result), "ERROR", cause);
  }

  private async cancelRollout(rollout: LiveRollout, cause: string): Promise<void> {
    const c = this.core;
    const group = c.groups.get(rollout.groupId)!;
    this.cancelOnNode(rollout, cause);
    const result = syntheticErrorResult({ sessionId: rollout.id, taskId: group.taskId, cause: `cancelled: ${cause}`, metadata: group.request.metadata });
    await this.finish(rollout, wholeResult(result), "CANCELLED", cause);
  }

  /** Tells the node running `rollout` to stop it (nothing when it is queued or its node is away). */
  cancelOnNode(rollout: LiveRollout, reason: string): void {
    if (rollout.state === "ASSIGNED" && rollout.nodeId)
      this.core.nodes.get(rollout.nodeId)?.peer?.send({ type: "cancel", rollout_id: rollout.id, attempt: rollout.attempt, reason });
  }

  /** Removes a group and everything of it (admin delete): running members are cancelled on their nodes. */
  async deleteGroup(groupId: string): Promise<boolean> {
    const c = this.core;
    const group = c.groups.get(groupId);
    if (group) {
      c.groups.delete(groupId);
      for (const id of group.members) {
        const rollout = c.rollouts.get(id);
        if (!rollout) continue;
        this.cancelOnNode(rollout, "group deleted");
        c.rollouts.move(rollout, { to: "CANCELLED", cause: "group deleted" });
      }
      c.scheduleDispatch();
    }
    const row = await c.repo.findGroup(groupId);
    if (!row) return false;
    await c.persist(() => c.repo.deleteGroup(groupId));
    c.events.emit("group.deleted", { group_id: groupId, at: c.now() });
    return true;
  }
}
