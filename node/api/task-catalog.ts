// Why: a request whose task_id names a task of a loaded task file may omit what the task defines
// (instruction, runtime, evaluator); the catalog holds those rows, read once at start, with host
// paths of their prepare actions resolved against the file's folder.
import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { Task } from "../../protocol/task.ts";
import { PolarError } from "../errors.ts";

export interface TaskCatalog {
  get(taskId: string): Record<string, unknown> | undefined;
  ids(): string[];
}

export const BUNDLED_TASKS_FILE = resolve(import.meta.dir, "../../tasks/tasks.jsonl");

function resolveSources(row: Record<string, unknown>, baseDir: string): Record<string, unknown> {
  const runtime = row.runtime as { prepare?: { source?: string }[]; eval_prepare?: { source?: string }[] } | null | undefined;
  for (const list of [runtime?.prepare, runtime?.eval_prepare]) {
    for (const action of list ?? []) if (action.source && !isAbsolute(action.source)) action.source = resolve(baseDir, action.source);
  }
  return row;
}

/** Reads a JSONL task file (one task row per line). */
export function loadTaskCatalog(path: string): TaskCatalog {
  const rows = new Map<string, Record<string, unknown>>();
  const lines = readFileSync(path, "utf8").split("\n");
  for (const [i, line] of lines.entries()) {
    if (!line.trim()) continue;
    const parsed = Task.safeParse(JSON.parse(line));
    if (!parsed.success) throw new PolarError("bad_request", `${path}:${i + 1}: ${parsed.error.issues.map((x) => `${x.path.join(".")}: ${x.message}`).join("; ")}`);
    rows.set(parsed.data.task_id, resolveSources(parsed.data as Record<string, unknown>, dirname(path)));
  }
  return { get: (id) => rows.get(id), ids: () => [...rows.keys()] };
}

/** The request with what it omitted taken from the task row (request fields win). */
export function withTaskDefaults(body: Record<string, unknown>, row: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!row) return body;
  const merged: Record<string, unknown> = { ...body };
  for (const key of ["instruction", "runtime", "evaluator", "timeout_seconds"] as const) {
    if (merged[key] === undefined && row[key] !== undefined && row[key] !== null) merged[key] = row[key];
  }
  const rowMeta = (row.metadata ?? {}) as Record<string, unknown>;
  merged.metadata = { ...rowMeta, ...((body.metadata as Record<string, unknown> | undefined) ?? {}) };
  // The evaluator may need the task row's SWE fields (tests, patches) that a request never carries.
  merged.task = row;
  return merged;
}
