// Why: a request whose task_id names a task of a loaded task file may omit what the task defines
// (instruction, runtime, evaluator); the catalog holds those rows (read once at start with the
// task-file loader of node/eval) and fills a request's gaps from them.
import { resolve } from "node:path";
import type { Task } from "../../protocol/task.ts";
import { loadTaskFile } from "../../lib/task-file.ts";
import { PolarError } from "../../protocol/errors.ts";

export interface TaskCatalog {
  get(taskId: string): Task | undefined;
  ids(): string[];
}

export const BUNDLED_TASKS_FILE = resolve(import.meta.dir, "../../tasks/tasks.jsonl");

/** Reads a task file; any bad row stops the node (its line and field named). */
export async function loadTaskCatalog(path: string): Promise<TaskCatalog> {
  const loaded = await loadTaskFile(path);
  if (loaded.issues.length > 0) {
    throw new PolarError("bad_request", `task file ${path}: ${loaded.issues.map((i) => `line ${i.line}${i.field ? ` ${i.field}` : ""}: ${i.message}`).join("; ")}`);
  }
  const rows = new Map(loaded.tasks.map((t) => [t.task_id, t]));
  return { get: (id) => rows.get(id), ids: () => [...rows.keys()] };
}

export const EMPTY_CATALOG: TaskCatalog = { get: () => undefined, ids: () => [] };

/** The request with what it omitted taken from the task row (request fields win). */
export function withTaskDefaults(body: Record<string, unknown>, row: Task | undefined): Record<string, unknown> {
  if (!row) return body;
  const merged: Record<string, unknown> = { ...body };
  for (const key of ["instruction", "runtime", "evaluator"] as const) {
    if (merged[key] === undefined && row[key] !== undefined && row[key] !== null) merged[key] = row[key];
  }
  merged.metadata = { ...row.metadata, ...((body.metadata as Record<string, unknown> | undefined) ?? {}) };
  return merged;
}
