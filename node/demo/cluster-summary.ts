// Why: the cluster demo's closing table — per group: task, rewards, GRPO advantages, the nodes
// that ran it, the policy versions its rollouts started at, tokens and mean stage timings — read
// from the results the trainer received.
import type { StreamedResult } from "../../protocol/trainer-stream.ts";

export interface DemoGroup {
  group_id: string;
  task_id: string;
  rollout_ids: string[];
  advantages: (number | null)[];
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const secs = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

export function printGroupSummary(groups: DemoGroup[], results: StreamedResult[]): void {
  const byRollout = new Map(results.map((r) => [r.rollout_id, r]));
  const header = ["group", "task", "rewards", "advantages", "nodes", "versions", "tokens (trainable)", "init", "run", "postrun", "e2e"];
  const rows = groups.map((g) => {
    const rs = g.rollout_ids.map((id) => byRollout.get(id)).filter((r): r is StreamedResult => r !== undefined);
    let total = 0;
    let trainable = 0;
    for (const r of rs) {
      for (const t of r.traces as { prompt_ids: number[]; response_ids: number[]; loss_mask: number[] }[]) {
        total += t.prompt_ids.length + t.response_ids.length;
        trainable += t.loss_mask.filter((m) => m === 1).length;
      }
    }
    const timing = (key: string) => secs(mean(rs.map((r) => r.timing[key] ?? 0)));
    return [
      g.group_id,
      g.task_id,
      rs.map((r) => (r.reward === null ? "x" : String(r.reward))).join(" "),
      g.advantages.map((a) => (a === null ? "x" : a.toFixed(2))).join(" "),
      [...new Set(rs.map((r) => r.node_id ?? "?"))].sort().join(","),
      [...new Set(rs.map((r) => r.policy_version_started))].sort((a, b) => a - b).join(","),
      `${total} (${trainable})`,
      timing("init_ms"),
      timing("run_ms"),
      timing("postrun_ms"),
      timing("e2e_ms"),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ");
  console.log(
    `\n${fmt(header)}\n${widths.map((w) => "-".repeat(w)).join("  ")}\n${rows.map(fmt).join("\n")}\n(stage timings are means per rollout; versions: policy versions the rollouts started at)\n`,
  );
}
