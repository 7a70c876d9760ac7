// Why: Polar's task view over the pipeline — a task of `num_samples` rollouts with server-minted
// session ids, its status words (running → completed | failed, cancelling → cancelled), early
// stop once enough results are usable, and one TaskResult handed to the callback when it ends.
import { randomBytes } from "node:crypto";
import { SessionResult, TaskRequest, type TaskResult, type TaskStatus, type TaskStatusWord } from "../../protocol/rollout.ts";
import type { Strategy } from "../../protocol/trace.ts";
import { PolarError } from "../../protocol/errors.ts";
import type { HarnessKind } from "../harness/registry.ts";
import type { RolloutsRepo } from "../store/rollouts-repo.ts";
import type { Pipeline } from "./pipeline.ts";
import { newRollout } from "./rollout.ts";

interface TaskEntry {
  request: TaskRequest;
  status: TaskStatusWord;
  rolloutIds: string[];
  results: SessionResult[];
}

export interface TaskBookDeps {
  store: RolloutsRepo;
  pipeline: Pipeline;
  /** Called once per finished task, after its final status is stored. */
  onTaskDone(result: TaskResult): void;
  /** How long an unknown id cancelled with register_if_missing stays remembered. */
  cancelledMemoryMs?: number;
}

const DEFAULT_CANCELLED_MEMORY_MS = 10 * 60_000;

/** A result counts toward early stop when it completed and is trainable. */
export function isUsable(result: SessionResult): boolean {
  return result.status === "COMPLETED";
}

export class TaskBook {
  private readonly tasks = new Map<string, TaskEntry>();
  private readonly cancelledUnknown = new Map<string, number>();

  constructor(private readonly deps: TaskBookDeps) {}

  /** Reloads tasks still open in the store (after a restart every rollout of theirs has a result). */
  async load(): Promise<void> {
    for (const row of await this.deps.store.tasksIn(["running", "cancelling"])) {
      const rollouts = await this.deps.store.rolloutsOf(row.taskId);
      const results = (await this.deps.store.results(row.taskId)).map((r) => SessionResult.parse(r));
      const entry: TaskEntry = { request: TaskRequest.parse(row.request), status: row.status as TaskStatusWord, rolloutIds: rollouts.map((r) => r.id), results };
      this.tasks.set(row.taskId, entry);
      await this.maybeDone(row.taskId, entry);
    }
  }

  /** Stores the task and its rollouts, then queues them. 409 while a task of that id runs. */
  async submit(request: TaskRequest, harness: HarnessKind, strategy: Strategy): Promise<void> {
    const existing = this.tasks.get(request.task_id);
    if (existing && (existing.status === "running" || existing.status === "cancelling")) {
      throw new PolarError("conflict", `task ${request.task_id} is already ${existing.status}`);
    }
    const until = this.cancelledUnknown.get(request.task_id);
    if (until !== undefined && until > Date.now()) throw new PolarError("conflict", `task ${request.task_id} was cancelled`);
    const rollouts = Array.from({ length: request.num_samples }, (_, sampleIndex) =>
      newRollout({ id: `ses_${randomBytes(12).toString("hex")}`, taskId: request.task_id, sampleIndex, request, harness, strategy }),
    );
    const entry: TaskEntry = { request, status: "running", rolloutIds: rollouts.map((r) => r.id), results: [] };
    this.tasks.set(request.task_id, entry);
    await this.deps.store.createTask(
      request.task_id,
      request as unknown as Record<string, unknown>,
      rollouts.map((r) => ({ id: r.id, sampleIndex: r.sampleIndex, priority: request.dispatch_priority })),
    );
    for (const r of rollouts) this.deps.pipeline.submit(r);
  }

  /** The pipeline reports each stored result here. */
  async onResult(result: SessionResult): Promise<void> {
    const entry = this.tasks.get(result.task_id);
    if (!entry) return;
    entry.results.push(result);
    const threshold = entry.request.early_stop_min_usable_sessions;
    if (entry.status === "running" && threshold != null && entry.results.filter(isUsable).length >= threshold) {
      for (const id of entry.rolloutIds) this.deps.pipeline.stop(id, "early_stop");
    }
    await this.maybeDone(result.task_id, entry);
  }

  /** DELETE /rollout/task/{id}: cancels every rollout; the task ends `cancelled`. */
  async cancel(taskId: string, registerIfMissing: boolean): Promise<TaskStatus> {
    const entry = this.tasks.get(taskId);
    if (!entry) {
      if (!registerIfMissing) throw new PolarError("not_found", `no task ${taskId}`);
      this.cancelledUnknown.set(taskId, Date.now() + (this.deps.cancelledMemoryMs ?? DEFAULT_CANCELLED_MEMORY_MS));
      return { task_id: taskId, status: "cancelled", total_sessions: 0, completed_sessions: 0, results: [], result_paths: [] };
    }
    if (entry.status === "running") {
      entry.status = "cancelling";
      await this.deps.store.setTaskStatus(taskId, "cancelling", false);
      for (const id of entry.rolloutIds) this.deps.pipeline.stop(id, "cancelled");
    }
    return this.view(taskId, entry);
  }

  status(taskId: string): TaskStatus {
    const entry = this.tasks.get(taskId);
    if (!entry) {
      if ((this.cancelledUnknown.get(taskId) ?? 0) > Date.now()) return { task_id: taskId, status: "cancelled", total_sessions: 0, completed_sessions: 0, results: [], result_paths: [] };
      throw new PolarError("not_found", `no task ${taskId}`);
    }
    return this.view(taskId, entry);
  }

  list(): TaskStatus[] {
    return [...this.tasks.entries()].map(([id, e]) => this.view(id, e));
  }

  /** Counts of tasks per status word. */
  counts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const e of this.tasks.values()) counts[e.status] = (counts[e.status] ?? 0) + 1;
    return counts;
  }

  private view(taskId: string, entry: TaskEntry): TaskStatus {
    return {
      task_id: taskId,
      status: entry.status,
      total_sessions: entry.rolloutIds.length,
      completed_sessions: entry.results.length,
      results: [...entry.results],
      result_paths: [],
    };
  }

  private async maybeDone(taskId: string, entry: TaskEntry): Promise<void> {
    if (entry.results.length < entry.rolloutIds.length) return;
    if (entry.status !== "running" && entry.status !== "cancelling") return;
    entry.status = entry.status === "cancelling" ? "cancelled" : entry.results.some(isUsable) ? "completed" : "failed";
    await this.deps.store.setTaskStatus(taskId, entry.status, true);
    this.deps.onTaskDone({ task_id: taskId, status: entry.status, results: [...entry.results], result_paths: [] });
  }
}
