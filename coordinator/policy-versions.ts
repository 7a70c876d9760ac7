// Why: with `maxStaleness` and the `cancel` action, a policy version moving forward stops every
// rollout started too many versions ago on its node and queues it again, to be sampled from the
// current policy; which rollouts that is, and doing it, lives here.
import type { CoordinatorCore } from "./core.ts";
import type { NodePresence } from "./node-presence.ts";
import type { Outcomes } from "./outcomes.ts";
import type { LiveRollout } from "./rollout-states.ts";

/** Running rollouts started before `oldest`, by the node running them. */
export function staleByNode(rollouts: Iterable<LiveRollout>, oldest: number): Map<string, LiveRollout[]> {
  const byNode = new Map<string, LiveRollout[]>();
  for (const r of rollouts) {
    if (r.state !== "ASSIGNED" || r.nodeId === null || (r.policyVersionStarted ?? oldest) >= oldest) continue;
    (byNode.get(r.nodeId) ?? byNode.set(r.nodeId, []).get(r.nodeId)!).push(r);
  }
  return byNode;
}

/** Stops and requeues what `version` made too stale (when configured to); returns how many. */
export async function cancelStale(c: CoordinatorCore, outcomes: Outcomes, presence: NodePresence, version: number): Promise<number> {
  if (c.config.maxStaleness === undefined || c.config.staleAction !== "cancel") return 0;
  let cancelled = 0;
  for (const [nodeId, stale] of staleByNode(c.rollouts.values(), version - c.config.maxStaleness)) {
    const node = c.nodes.get(nodeId);
    if (!node) continue;
    for (const r of stale) outcomes.cancelOnNode(r, "stale policy");
    cancelled += stale.length;
    await presence.release(
      node,
      stale.map((r) => r.id),
      "stale policy",
    );
  }
  return cancelled;
}
