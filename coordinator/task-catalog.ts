// Why: trainers and rollout API requests may name a task by id instead of sending it whole; the
// coordinator loads a task file (Polar TaskRequest / SWE-bench rows) once, with the same loader as
// the nodes (bad rows reported by line and field; upload paths resolved against the file).
import { loadTaskFile } from "../lib/task-file.ts";
import type { Task } from "../protocol/task.ts";

export class TaskCatalog {
  private constructor(private readonly tasks: Map<string, Task>) {}

  static empty(): TaskCatalog {
    return new TaskCatalog(new Map());
  }

  /** Loads every valid row; the issues of bad rows are returned for the operator. */
  static async load(path: string): Promise<{ catalog: TaskCatalog; errors: string[] }> {
    const loaded = await loadTaskFile(path);
    const errors = loaded.issues.map((i) => `${path}:${i.line}: ${i.field ? `${i.field}: ` : ""}${i.message}`);
    return { catalog: new TaskCatalog(new Map(loaded.tasks.map((t) => [t.task_id, t]))), errors };
  }

  get(id: string): Task | undefined {
    return this.tasks.get(id);
  }

  get size(): number {
    return this.tasks.size;
  }
}
