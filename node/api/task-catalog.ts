// Why: a node reads its task file once at start (the bundled set by default) into the shared
// catalog (lib/task-catalog.ts); a bad row stops the node, its line and field named.
import { resolve } from "node:path";
import { describeIssues, TaskCatalog } from "../../lib/task-catalog.ts";
import { PolarError } from "../../protocol/errors.ts";

export const BUNDLED_TASKS_FILE = resolve(import.meta.dir, "../../tasks/tasks.jsonl");

export async function loadTaskCatalog(path: string): Promise<TaskCatalog> {
  const { catalog, issues } = await TaskCatalog.load(path);
  if (issues.length > 0) throw new PolarError("bad_request", `task file ${describeIssues(path, issues).join("; ")}`);
  return catalog;
}
