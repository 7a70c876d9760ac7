// Why: trainers and rollout API requests may name a task by id instead of sending it whole; the
// coordinator loads a JSONL task file (Polar TaskRequest / SWE-bench rows) once and looks ids up.
import { readFileSync } from "node:fs";
import { z } from "zod";
import { InlineTask } from "../protocol/trainer-stream.ts";

export type CatalogTask = z.infer<typeof InlineTask>;

export class TaskCatalog {
  private constructor(private readonly tasks: Map<string, CatalogTask>) {}

  static empty(): TaskCatalog {
    return new TaskCatalog(new Map());
  }

  /** Loads every valid row; a bad row is reported with its line number and the rest still load. */
  static load(path: string): { catalog: TaskCatalog; errors: string[] } {
    const tasks = new Map<string, CatalogTask>();
    const errors: string[] = [];
    readFileSync(path, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (line.trim() === "") return;
        try {
          const raw = JSON.parse(line) as Record<string, unknown>;
          const row = { ...raw, task_id: raw.task_id ?? raw.instance_id, instruction: raw.instruction ?? raw.problem_statement };
          const parsed = InlineTask.safeParse(row);
          if (parsed.success) tasks.set(parsed.data.task_id, parsed.data);
          else errors.push(`${path}:${i + 1}: ${parsed.error.issues.map((is) => `${is.path.join(".") || "(row)"}: ${is.message}`).join("; ")}`);
        } catch (err) {
          errors.push(`${path}:${i + 1}: not JSON (${(err as Error).message})`);
        }
      });
    return { catalog: new TaskCatalog(tasks), errors };
  }

  get(id: string): CatalogTask | undefined {
    return this.tasks.get(id);
  }

  get size(): number {
    return this.tasks.size;
  }
}
