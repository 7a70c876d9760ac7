// Why: every Gym `/run` is its own Polar task (Gym sends one dataset row many times at once, and
// a task id runs once at a time), yet the node fills a submitted task from its catalog by task id
// and evaluates it against the catalog's row (test patch, FAIL_TO_PASS, …). This catalog answers
// the node's own task file and, for the life of one `/run`, the row that run resolved, under the
// run's own task id.
import type { Task } from "../../protocol/task.ts";
import { TaskCatalog } from "../../lib/task-catalog.ts";

export class RolloutTaskCatalog extends TaskCatalog {
  private readonly live = new Map<string, Task>();

  constructor(private readonly base: TaskCatalog) {
    super(new Map(), base.baseDir);
  }

  override get(taskId: string): Task | undefined {
    return this.live.get(taskId) ?? this.base.get(taskId);
  }

  /** The node's task file only (what `GET /tasks` lists); runs' own ids are not tasks to name. */
  override ids(): string[] {
    return this.base.ids();
  }

  override get size(): number {
    return this.base.size;
  }

  /** A task of the node's task file. */
  fileTask(taskId: string): Task | undefined {
    return this.base.get(taskId);
  }

  /** Serves `task` under `runTaskId` until released. */
  hold(runTaskId: string, task: Task): void {
    this.live.set(runTaskId, { ...task, task_id: runTaskId });
  }

  release(runTaskId: string): void {
    this.live.delete(runTaskId);
  }

  /** The task ids of the runs holding a row right now. */
  heldIds(): string[] {
    return [...this.live.keys()];
  }

  /** Runs holding a row right now. */
  get held(): number {
    return this.live.size;
  }
}
