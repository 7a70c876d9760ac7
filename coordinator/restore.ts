// Why: a restarted coordinator picks up where its previous life stopped, from the store alone:
// running groups with the outcomes they already have, queued rollouts queued again, assigned
// ones waiting out their node's grace, and every group whose members all finished before the
// crash (its completion was not written yet) completed now.
import type { CoordinatorCore } from "./core.ts";
import { groupFromRow, isComplete } from "./groups.ts";
import type { Outcomes } from "./outcomes.ts";

/** Reloads groups and rollouts (the policy version is read first, by the caller). */
export async function restoreFromStore(c: CoordinatorCore, outcomes: Outcomes): Promise<void> {
  const { groups, rollouts } = await c.repo.loadActive();
  const sampling = new Map((await c.repo.samplingOfGroups(groups.map((g) => g.id))).map((s) => [s.groupId, s]));
  for (const row of groups) c.groups.set(row.id, groupFromRow(row, [], sampling.get(row.id)));
  for (const done of await c.repo.finishedOfGroups(groups.map((g) => g.id))) {
    const group = c.groups.get(done.groupId);
    if (!group) continue;
    group.members.push(done.id);
    // The stored result's status and reward: a group completed here is judged on them (flatness, pass rate).
    group.outcomes.set(done.id, { status: done.status ?? done.state, reward: done.reward, usable: done.state === "COMPLETED" });
  }
  let queued = 0;
  const awaiting = new Set<string>();
  for (const r of rollouts) {
    const group = c.groups.get(r.groupId);
    if (!group) continue;
    group.members.push(r.id);
    const base = {
      id: r.id,
      groupId: r.groupId,
      idx: r.idx,
      image: r.image,
      priority: r.priority,
      seq: r.seq,
      attempt: r.attempt,
      policyVersionStarted: r.policyVersionStarted,
      stage: null,
      since: c.now(),
    };
    if (r.state === "ASSIGNED" && r.nodeId) {
      // The node may still be running it: wait for it to reconnect (grace) before requeueing.
      if (!c.nodes.get(r.nodeId)) c.nodes.add(r.nodeId, { to: "disconnected", cause: "assigned before the coordinator restarted" });
      c.rollouts.add({ ...base, state: "ASSIGNED", nodeId: r.nodeId }, "restored");
      awaiting.add(r.nodeId);
    } else {
      c.rollouts.add({ ...base, state: "QUEUED", nodeId: null }, "restored");
      queued++;
    }
  }
  let completed = 0;
  for (const group of [...c.groups.values()]) {
    if (isComplete(group)) completed++;
    // Completes what finished before the crash; applies early stop a crash interrupted.
    await outcomes.afterOutcome(group);
  }
  c.events.emit("coordinator.restored", {
    policy_version: c.policyVersion(),
    groups: groups.length,
    queued,
    awaiting_nodes: rollouts.length - queued,
    nodes: [...awaiting],
    groups_completed: completed,
    at: c.now(),
  });
  c.scheduleDispatch();
}
