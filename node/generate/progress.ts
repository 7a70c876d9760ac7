// Why: a generation run takes hours; its progress (accepted / attempted, acceptance rate, tokens,
// ETA) is one redrawn line on a terminal and a line every few seconds in a log, and its summary
// is computed once from the ledger — the same numbers whether the run was resumed or not.
import type { GenerateAttempt, GenerateSummary } from "../../protocol/generate.ts";

const BAR_WIDTH = 24;
const LOG_EVERY_MS = 5_000;

export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}h${String(m).padStart(2, "0")}m` : m > 0 ? `${m}m${String(s % 60).padStart(2, "0")}s` : `${s}s`;
}

export function compact(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

const percent = (part: number, whole: number) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : "-");

/** Totals over the ledger. */
export function summarize(
  attempts: readonly GenerateAttempt[],
  extra: { tasks: number; samples: number; resumedAttempts: number; wallTimeS: number },
): GenerateSummary {
  const accepted = attempts.filter((a) => a.outcome === "accepted");
  const known = accepted.filter((a) => a.tokens !== undefined);
  const failures: Record<string, number> = {};
  for (const a of attempts) if (a.outcome !== "accepted") failures[a.failure_kind ?? a.outcome] = (failures[a.failure_kind ?? a.outcome] ?? 0) + 1;
  return {
    tasks: extra.tasks,
    samples: extra.samples,
    attempted: attempts.length,
    accepted: accepted.length,
    acceptance_rate: attempts.length > 0 ? accepted.length / attempts.length : null,
    rows: accepted.reduce((n, a) => n + a.rows, 0),
    tokens_per_accepted_trajectory: known.length > 0 ? known.reduce((n, a) => n + a.tokens!, 0) / known.length : null,
    engine_tokens: attempts.reduce((t, a) => ({ prompt: t.prompt + a.engine_tokens.prompt, completion: t.completion + a.engine_tokens.completion }), {
      prompt: 0,
      completion: 0,
    }),
    resumed_attempts: extra.resumedAttempts,
    wall_time_s: extra.wallTimeS,
    failures_by_kind: Object.fromEntries(Object.entries(failures).sort((a, b) => b[1] - a[1])),
    remaining: Math.max(0, extra.tasks * extra.samples - attempts.length),
  };
}

export function formatSummary(s: GenerateSummary): string {
  const failures =
    Object.entries(s.failures_by_kind)
      .map(([kind, n]) => `${kind} ${n}`)
      .join(", ") || "none";
  return [
    `attempted      ${s.attempted} of ${s.tasks} tasks × ${s.samples} samples${s.resumed_attempts ? ` (${s.resumed_attempts} from an earlier run)` : ""}${s.remaining ? `, ${s.remaining} not run` : ""}`,
    `accepted       ${s.accepted} (${percent(s.accepted, s.attempted)}), ${s.rows} rows`,
    `tokens/accepted ${s.tokens_per_accepted_trajectory === null ? "unknown" : Math.round(s.tokens_per_accepted_trajectory).toLocaleString("en-US")} (prompt + response of its rows)`,
    `engine tokens  ${s.engine_tokens.prompt.toLocaleString("en-US")} prompt, ${s.engine_tokens.completion.toLocaleString("en-US")} completion`,
    `wall time      ${duration(s.wall_time_s)}`,
    `not accepted   ${failures}`,
  ].join("\n");
}

/** The live line: on a terminal redrawn in place, otherwise printed every few seconds. */
export class Progress {
  private attempted = 0;
  private accepted = 0;
  private tokens = 0;
  private runNow = 0;
  private readonly started = performance.now();
  private lastLog = 0;

  constructor(
    private readonly total: number,
    before: readonly GenerateAttempt[],
    private readonly write: (text: string) => void = (t) => process.stderr.write(t),
    private readonly tty: boolean = process.stderr.isTTY === true,
  ) {
    for (const a of before) this.count(a);
  }

  private count(a: GenerateAttempt): void {
    this.attempted++;
    if (a.outcome === "accepted") {
      this.accepted++;
      this.tokens += a.tokens ?? 0;
    }
  }

  add(a: GenerateAttempt): void {
    this.count(a);
    this.runNow++;
    this.draw(false);
  }

  line(): string {
    const filled = this.total > 0 ? Math.round((BAR_WIDTH * this.attempted) / this.total) : BAR_WIDTH;
    const elapsed = (performance.now() - this.started) / 1000;
    const eta = this.runNow > 0 ? duration((elapsed / this.runNow) * (this.total - this.attempted)) : "-";
    return `[${"#".repeat(filled)}${".".repeat(BAR_WIDTH - filled)}] ${this.accepted}/${this.attempted} accepted/attempted of ${this.total} (${percent(this.accepted, this.attempted)}) · ${compact(this.tokens)} tokens · ETA ${eta}`;
  }

  draw(final: boolean): void {
    if (this.tty) {
      this.write(`\r\x1b[2K${this.line()}${final ? "\n" : ""}`);
      return;
    }
    const now = performance.now();
    if (final || now - this.lastLog >= LOG_EVERY_MS) {
      this.lastLog = now;
      this.write(`polar generate: ${this.line()}\n`);
    }
  }
}
