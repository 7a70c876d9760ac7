// Why: Prometheus scrapes `/metrics`; the text format is written here from the coordinator's
// live counters and the store's counts, one metric family per line group.
import type { Coordinator } from "../coordinator.ts";

type Sample = [labels: Record<string, string>, value: number];

function family(name: string, type: "gauge" | "counter", help: string, samples: Sample[]): string {
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`];
  for (const [labels, value] of samples) {
    const l = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/["\\\n]/g, "_")}"`).join(",");
    lines.push(`${name}${l ? `{${l}}` : ""} ${Number.isFinite(value) ? value : 0}`);
  }
  return lines.join("\n");
}

export async function metricsText(coordinator: Coordinator): Promise<string> {
  const byState = await coordinator.repo.countRolloutsByState();
  const nodes = [...coordinator.nodes.values()];
  const count = (status: string) => nodes.filter((n) => n.state === status).length;
  const k = coordinator.counters;
  const gatewayCalls = nodes.reduce((a, n) => a + n.gatewayCalls, 0);
  const gatewayMs = nodes.reduce((a, n) => a + n.gatewayTotalMs, 0);
  return [
    family("polar_queue_depth", "gauge", "Rollouts waiting for a node.", [[{}, coordinator.queue.size]]),
    family("polar_rollouts", "gauge", "Rollouts in the store by state.", Object.entries(byState).map(([state, n]) => [{ state }, n])),
    family("polar_nodes", "gauge", "Nodes by status.", ["connected", "draining", "disconnected"].map((s) => [{ status: s }, count(s)])),
    family("polar_dispatched_total", "counter", "Assignments sent to nodes.", [[{}, k.dispatched]]),
    family("polar_results_accepted_total", "counter", "Results stored from nodes.", [[{}, k.results_accepted]]),
    family("polar_results_late_dropped_total", "counter", "Results dropped as late or repeated.", [[{}, k.results_late_dropped]]),
    family("polar_results_streamed_total", "counter", "Results sent to trainers.", [[{}, k.results_streamed]]),
    family("polar_results_streamed_bytes_total", "counter", "Bytes of results sent to trainers.", [[{}, k.results_streamed_bytes]]),
    family("polar_requeued_total", "counter", "Rollouts put back in the queue (lost nodes, staleness).", [[{}, k.requeued]]),
    family("polar_groups_flat_total", "counter", "Completed groups whose reward std was at or below their min_reward_std.", [[{}, k.groups_flat]]),
    family("polar_groups_replaced_total", "counter", "Fresh groups started in place of flat ones.", [[{}, k.groups_replaced]]),
    family("polar_group_replacements_exhausted_total", "counter", "Flat groups that asked for a replacement and got none.", [[{}, k.replacements_exhausted]]),
    family("polar_stage_duration_ms_sum", "counter", "Summed stage durations of finished rollouts.", Object.entries(k.stage_ms).map(([stage, s]) => [{ stage }, s.sum])),
    family("polar_stage_duration_ms_count", "counter", "Finished rollouts with a duration for the stage.", Object.entries(k.stage_ms).map(([stage, s]) => [{ stage }, s.count])),
    family("polar_gateway_call_latency_ms_sum", "counter", "Gateway LLM call latency reported by nodes.", [[{}, gatewayMs]]),
    family("polar_gateway_call_latency_ms_count", "counter", "Gateway LLM calls reported by nodes.", [[{}, gatewayCalls]]),
  ].join("\n") + "\n";
}
