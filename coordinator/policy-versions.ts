// Why: the trainer's policy version only moves forward; when it does, it is stored, and with
// `maxStaleness` and the `cancel` action every rollout started too many versions ago is stopped
// on its node and queued again, to be sampled from the current policy.
import type { Coordinator } from "./coordinator.ts";
import type { NodeState } from "./nodes.ts";

export async function advancePolicyVersion(c: Coordinator, version: number): Promise<void> {
  if (version < c.policyVersion) throw new RangeError(`policy version ${version} is older than the current ${c.policyVersion}`);
  if (version === c.policyVersion) return;
  c.policyVersion = version;
  await c.persist(() => c.repo.setMeta("policy_version", String(version)));
  if (c.config.maxStaleness === undefined || c.config.staleAction !== "cancel") return;
  const oldest = version - c.config.maxStaleness;
  const byNode = new Map<NodeState, string[]>();
  for (const r of c.active.values()) {
    if (r.state !== "assigned" || r.nodeId === null || (r.policyVersionStarted ?? version) >= oldest) continue;
    const node = c.nodes.get(r.nodeId);
    if (!node) continue;
    node.peer?.send({ type: "cancel", rollout_id: r.id, attempt: r.attempt, reason: "stale policy" });
    (byNode.get(node) ?? byNode.set(node, []).get(node)!).push(r.id);
  }
  for (const [node, ids] of byNode) await c.releaseFromNode(node, ids, "stale policy");
}
