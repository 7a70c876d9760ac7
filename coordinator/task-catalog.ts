// Why: the coordinator reads its task file (the one trainers and rollout API requests may name
// tasks from) into the shared catalog; a bad row is skipped and reported, the rest still load.
import { describeIssues, TaskCatalog } from "../lib/task-catalog.ts";

export { TaskCatalog };

export async function loadCoordinatorCatalog(path: string): Promise<TaskCatalog> {
  const { catalog, issues } = await TaskCatalog.load(path);
  for (const line of describeIssues(path, issues)) console.error(`polar coordinator: skipped task row ${line}`);
  return catalog;
}
