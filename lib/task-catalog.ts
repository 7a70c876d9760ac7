// Why: a request (rollout API, trainer stream, coordinator assignment) may name a task of a
// loaded task file instead of sending it whole. The catalog of those rows and the one rule for
// "a request over a task row" live here, shared by the node and the coordinator, so every path
// fills a request's gaps the same way.
import { Task } from "../protocol/task.ts";
import type { TaskRequest } from "../protocol/rollout.ts";
import { loadTaskFile, type TaskFileIssue } from "./task-file.ts";

export class TaskCatalog {
  protected constructor(
    private readonly rows: Map<string, Task>,
    /** The task file's folder: relative upload sources of a request naming one of its tasks resolve here. */
    readonly baseDir: string | null,
  ) {}

  static empty(): TaskCatalog {
    return new TaskCatalog(new Map(), null);
  }

  static of(tasks: Task[], baseDir: string | null = null): TaskCatalog {
    return new TaskCatalog(new Map(tasks.map((t) => [t.task_id, t])), baseDir);
  }

  /** Loads every valid row; bad rows come back as issues (line and field) for the caller to report or refuse. */
  static async load(path: string): Promise<{ catalog: TaskCatalog; issues: TaskFileIssue[] }> {
    const loaded = await loadTaskFile(path);
    return { catalog: TaskCatalog.of(loaded.tasks, loaded.baseDir), issues: loaded.issues };
  }

  get(id: string): Task | undefined {
    return this.rows.get(id);
  }

  ids(): string[] {
    return [...this.rows.keys()];
  }

  get size(): number {
    return this.rows.size;
  }
}

/** One line per bad row, as operators read them: `path:line: field: message`. */
export function describeIssues(path: string, issues: TaskFileIssue[]): string[] {
  return issues.map((i) => `${path}:${i.line}: ${i.field ? `${i.field}: ` : ""}${i.message}`);
}

/**
 * A request over a task row: every field the request sets wins (an explicit `null` too — "no
 * evaluator" is a choice); what it leaves out comes from the row; metadata keys merge, the
 * request's over the row's. The row's other fields (SWE-bench's tests, gold patch…) travel
 * along, so whoever evaluates the request needs no catalog of its own.
 */
export function requestOverTask(request: Record<string, unknown>, row: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!row) return request;
  const merged: Record<string, unknown> = { ...row };
  for (const [key, value] of Object.entries(request)) if (value !== undefined) merged[key] = value;
  const rowMeta = isRecord(row.metadata) ? row.metadata : {};
  const requestMeta = isRecord(request.metadata) ? request.metadata : request.metadata === undefined ? {} : undefined;
  // A metadata that is not an object stays as sent, for the schema to refuse by name.
  merged.metadata = requestMeta ? { ...rowMeta, ...requestMeta } : request.metadata;
  return merged;
}

/** The task a request is evaluated against: the same rule, read back as a task row. */
export function taskOfRequest(request: TaskRequest, row: Task | undefined): Task {
  return Task.parse(requestOverTask(request as Record<string, unknown>, row as Record<string, unknown> | undefined));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
