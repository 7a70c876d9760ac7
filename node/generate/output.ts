// Why: a generate run must survive being killed at any instant and resume with no duplicate and
// no gap. Its folder holds `trajectories.jsonl` (accepted rows), `attempts.jsonl` (one line per
// finished task × sample, appended only after that attempt's rows) and `run.json` (the settings,
// which a restart must match). Opening the folder repairs what a kill can leave: a torn last line
// in either file, and rows whose attempt never reached the ledger (that attempt runs again).
import { closeSync, createReadStream, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { GenerateAttempt, GenerateSettings, GeneratedTrace, type GenerateSummary } from "../../protocol/generate.ts";
import { PolarError } from "../../protocol/errors.ts";

export const TRAJECTORIES_FILE = "trajectories.jsonl";
export const ATTEMPTS_FILE = "attempts.jsonl";
export const SETTINGS_FILE = "run.json";
export const SUMMARY_FILE = "summary.json";
const LOCK_FILE = ".lock";

const key = (taskId: string, sample: number) => `${taskId}\u0000${sample}`;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Complete JSON lines of a file parsed by `parse`; the first line that is not is where the file is cut. */
function goodLines<T>(path: string, parse: (json: unknown) => T): { items: T[]; lines: string[]; torn: boolean } {
  const items: T[] = [];
  const lines: string[] = [];
  if (!existsSync(path)) return { items, lines, torn: false };
  const text = readFileSync(path, "utf8");
  const complete = text.endsWith("\n") ? text : text.slice(0, text.lastIndexOf("\n") + 1);
  let torn = complete.length !== text.length;
  for (const line of complete.split("\n")) {
    if (line === "") continue;
    try {
      items.push(parse(JSON.parse(line)));
      lines.push(line);
    } catch {
      torn = true;
      break;
    }
  }
  return { items, lines, torn };
}

export class GenerateOutput {
  private readonly done = new Map<string, GenerateAttempt>();

  private constructor(
    readonly dir: string,
    readonly attempts: GenerateAttempt[],
  ) {
    for (const a of attempts) this.done.set(key(a.task_id, a.sample_index), a);
  }

  /**
   * Opens (or starts) the folder for a run with `settings`; a folder of another run, or one a
   * live process is writing, is refused. `onRow` sees every kept row (to rebuild dedup state).
   */
  static open(dir: string, settings: GenerateSettings, onRow: (row: GeneratedTrace) => void): GenerateOutput {
    mkdirSync(dir, { recursive: true });
    const lockPath = join(dir, LOCK_FILE);
    if (existsSync(lockPath)) {
      const pid = Number(readFileSync(lockPath, "utf8").trim());
      if (Number.isInteger(pid) && pid !== process.pid && alive(pid)) throw new PolarError("conflict", `${dir} is being written by process ${pid}`);
    }
    writeFileSync(lockPath, `${process.pid}\n`);
    try {
      const settingsPath = join(dir, SETTINGS_FILE);
      if (existsSync(settingsPath)) {
        const before = GenerateSettings.parse(JSON.parse(readFileSync(settingsPath, "utf8")));
        const differs = (Object.keys(settings) as (keyof GenerateSettings)[]).filter((k) => k !== "tasks_file" && before[k] !== settings[k]);
        if (differs.length > 0) {
          throw new PolarError(
            "conflict",
            `${dir} holds a run with other settings (${differs.map((k) => `${k}: ${JSON.stringify(before[k])} there, ${JSON.stringify(settings[k])} now`).join("; ")}); resume it with the same settings or use another --out`,
          );
        }
      } else writeFileSync(settingsPath, `${JSON.stringify(settings, null, 2)}\n`);

      const ledgerPath = join(dir, ATTEMPTS_FILE);
      const ledger = goodLines(ledgerPath, (j) => GenerateAttempt.parse(j));
      // One line per task × sample: a repeat (never written by us) keeps the first.
      const seen = new Set<string>();
      const attempts = ledger.items.filter((a) => !seen.has(key(a.task_id, a.sample_index)) && seen.add(key(a.task_id, a.sample_index)));
      if (ledger.torn || attempts.length !== ledger.items.length)
        rewrite(
          ledgerPath,
          attempts.map((a) => JSON.stringify(a)),
        );
      const output = new GenerateOutput(dir, attempts);

      const rowsPath = join(dir, TRAJECTORIES_FILE);
      const rows = goodLines(rowsPath, (j) => GeneratedTrace.parse(j));
      const rowIds = new Set<string>();
      const kept: string[] = [];
      rows.items.forEach((row, i) => {
        const attempt = output.done.get(key(row.task_id, row.sample_index));
        if (attempt?.outcome !== "accepted" || attempt.rollout_id !== row.rollout_id || rowIds.has(row.id)) return;
        rowIds.add(row.id);
        kept.push(rows.lines[i]!);
        onRow(row);
      });
      if (rows.torn || kept.length !== rows.items.length) rewrite(rowsPath, kept);
      return output;
    } catch (err) {
      rmSync(lockPath, { force: true });
      throw err;
    }
  }

  isDone(taskId: string, sample: number): boolean {
    return this.done.has(key(taskId, sample));
  }

  /** The attempt's rows, then its ledger line (a kill in between leaves rows the next open drops). */
  record(attempt: GenerateAttempt, rows: readonly GeneratedTrace[]): void {
    if (this.isDone(attempt.task_id, attempt.sample_index))
      throw new PolarError("internal", `attempt ${attempt.task_id}/${attempt.sample_index} recorded twice`);
    if (rows.length > 0) appendDurably(join(this.dir, TRAJECTORIES_FILE), rows.map((r) => `${JSON.stringify(r)}\n`).join(""));
    appendDurably(join(this.dir, ATTEMPTS_FILE), `${JSON.stringify(attempt)}\n`);
    this.done.set(key(attempt.task_id, attempt.sample_index), attempt);
    this.attempts.push(attempt);
  }

  writeSummary(summary: GenerateSummary): void {
    rewrite(join(this.dir, SUMMARY_FILE), [JSON.stringify(summary, null, 2)]);
  }

  close(): void {
    rmSync(join(this.dir, LOCK_FILE), { force: true });
  }
}

function appendDurably(path: string, text: string): void {
  const fd = openSync(path, "a");
  try {
    const bytes = Buffer.from(text);
    for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function rewrite(path: string, lines: string[]): void {
  const partial = `${path}.partial`;
  writeFileSync(partial, lines.map((l) => `${l}\n`).join(""));
  renameSync(partial, path);
}

/** Reads the rows of an output folder (tests, tools). */
export async function readRows(dir: string): Promise<GeneratedTrace[]> {
  const path = join(dir, TRAJECTORIES_FILE);
  if (!existsSync(path)) return [];
  const rows: GeneratedTrace[] = [];
  for await (const line of createInterface({ input: createReadStream(path) })) if (line !== "") rows.push(GeneratedTrace.parse(JSON.parse(line)));
  return rows;
}
