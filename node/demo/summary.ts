// Why: the demo's closing table — per task: rewards, traces, tokens and mean stage timings —
// read from the SessionResults the rollout API returned.
import type { SessionResult, TaskStatus } from "../../protocol/rollout.ts";

const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0);
const secs = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

function tokens(results: SessionResult[]): { total: number; trainable: number } {
  let total = 0;
  let trainable = 0;
  for (const r of results) {
    for (const t of r.trajectory.traces) {
      total += t.prompt_ids.length + t.response_ids.length;
      trainable += t.loss_mask.filter((m) => m === 1).length;
    }
  }
  return { total, trainable };
}

export function printSummary(statuses: TaskStatus[]): void {
  const header = ["task", "status", "rewards", "traces", "tokens (trainable)", "init", "ready", "run", "postrun", "eval", "e2e"];
  const rows = statuses.map((s) => {
    const rs = s.results;
    const tok = tokens(rs);
    const t = (key: keyof SessionResult["timing"]) => secs(mean(rs.map((r) => r.timing[key] as number)));
    return [
      s.task_id,
      s.status,
      rs.map((r) => (r.status === "COMPLETED" ? String(r.metadata.reward) : "x")).join(" "),
      String(rs.reduce((n, r) => n + r.trajectory.traces.length, 0)),
      `${tok.total} (${tok.trainable})`,
      t("init_ms"),
      t("ready_queue_ms"),
      t("run_ms"),
      t("postrun_ms"),
      t("eval_ms"),
      t("e2e_ms"),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ");
  console.log(`\n${fmt(header)}\n${widths.map((w) => "-".repeat(w)).join("  ")}\n${rows.map(fmt).join("\n")}\n(stage timings are means per rollout)\n`);
}
