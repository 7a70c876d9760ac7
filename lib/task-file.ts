// Why: task files arrive from users (ours, SWE-bench / SWE-Gym exports, Polar's task JSONL) and
// are read by nodes and the coordinator alike; one loader parses each line at this trust boundary,
// reports a bad row by line number and field without losing the rest of the file, and resolves
// upload paths against the task file.
import { readFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { Task } from "../protocol/task.ts";
import type { PrepareAction } from "../protocol/runtime.ts";

/** The task file itself cannot be read (missing, unreadable): the CLI answers it like a usage error. */
export class TaskFileError extends Error {}

export interface TaskFileIssue {
  /** 1-based line of the file. */
  line: number;
  /** The field the problem is in, as a dotted path ("" = the whole row). */
  field: string;
  message: string;
}

export interface LoadedTasks {
  tasks: Task[];
  issues: TaskFileIssue[];
  /** The folder relative upload sources were resolved against (the task file's). */
  baseDir: string;
}

/** Host paths in upload actions are relative to the task file's folder. */
function resolveSources(actions: PrepareAction[], baseDir: string): PrepareAction[] {
  return actions.map((action) => {
    if (action.type === "upload_dir") return { ...action, source: absolute(action.source, baseDir) };
    if (action.type === "upload_file" && action.source !== undefined) return { ...action, source: absolute(action.source, baseDir) };
    return action;
  });
}

function absolute(path: string, baseDir: string): string {
  return isAbsolute(path) ? path : resolve(baseDir, path);
}

/** Parses JSONL text; `baseDir` anchors relative upload sources. */
export function parseTaskLines(text: string, baseDir: string): LoadedTasks {
  const tasks: Task[] = [];
  const issues: TaskFileIssue[] = [];
  const seen = new Map<string, number>();
  text.split("\n").forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === "") return;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (err) {
      issues.push({ line, field: "", message: `not JSON: ${(err as Error).message}` });
      return;
    }
    const parsed = Task.safeParse(json);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) issues.push({ line, field: issue.path.join("."), message: issue.message });
      return;
    }
    const task = parsed.data;
    const earlier = seen.get(task.task_id);
    if (earlier !== undefined) {
      issues.push({ line, field: "task_id", message: `duplicate task_id ${task.task_id} (first on line ${earlier})` });
      return;
    }
    seen.set(task.task_id, line);
    if (task.runtime) {
      task.runtime = {
        ...task.runtime,
        prepare: resolveSources(task.runtime.prepare, baseDir),
        eval_prepare: resolveSources(task.runtime.eval_prepare, baseDir),
      };
    }
    tasks.push(task);
  });
  return { tasks, issues, baseDir };
}

export async function loadTaskFile(path: string): Promise<LoadedTasks> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new TaskFileError(`task file ${path} cannot be read: ${(err as Error).message}`);
  }
  return parseTaskLines(text, dirname(resolve(path)));
}
