// Why: Polar's task view over the pipeline — a task of `num_samples` rollouts with server-minted
// session ids, early stop once enough results are usable, a cancel that waits until every
// session has stopped, and one TaskResult handed on when the task ends. Live tasks are held in
// memory; finished ones are read back from the store, so they answer after a restart and cost
// no memory until they are pruned.
import { randomBytes } from "node:crypto";
import { SessionResult, TASK_ID_PATTERN, TaskRequest, type TaskResult, type TaskStatus } from "../../protocol/rollout.ts";
import type { SubmitOutcome } from "../../lib/rollout-api/port.ts";
import type { AcceptedTask } from "../../lib/rollout-api/submission.ts";
import { isUsableResult, taskStatus, type TaskPhase } from "../../lib/rollout-api/task-status.ts";
import type { RolloutsRepo } from "../store/rollouts-repo.ts";
import type { Pipeline } from "./pipeline.ts";
import { newRollout } from "./rollout.ts";

interface LiveTask {
  request: TaskRequest;
  phase: "running" | "cancelling";
  rolloutIds: string[];
  results: SessionResult[];
  /** Set (synchronously) by the result that completes the task, so only one ends it. */
  ending: boolean;
  /** Resolves once the task has ended (its final status stored). */
  ended: Promise<void>;
  end(): void;
}

export interface TaskBookDeps {
  store: RolloutsRepo;
  pipeline: Pipeline;
  /** Called once per finished task, after its final status is stored. */
  onTaskDone(result: TaskResult, request: TaskRequest): void;
}

/** Rollout-API tasks only: coordinator assignments (`coordinator:…`) and kept earlier runs (`…#…`) are not this book's. */
export function isApiTask(taskId: string): boolean {
  return TASK_ID_PATTERN.test(taskId);
}

/** A cancel keeps only the sessions that had finished: the ones the cancel stopped are dropped. */
export function finishedBeforeCancel(result: SessionResult): boolean {
  const failure = (result.metadata as { failure?: { cause?: unknown } }).failure;
  return failure?.cause !== "cancelled";
}

function liveTask(request: TaskRequest, rolloutIds: string[], results: SessionResult[], phase: LiveTask["phase"]): LiveTask {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  return { request, phase, rolloutIds, results, ending: false, ended, end };
}

export class TaskBook {
  private readonly live = new Map<string, LiveTask>();

  constructor(private readonly deps: TaskBookDeps) {}

  /** Reloads the tasks still open in the store (after a restart every rollout of theirs has a result). */
  async load(): Promise<void> {
    for (const row of await this.deps.store.tasksIn(["running", "cancelling"])) {
      if (!isApiTask(row.taskId)) continue;
      const rollouts = await this.deps.store.rolloutsOf(row.taskId);
      const results = (await this.deps.store.results(row.taskId)).map((r) => SessionResult.parse(r));
      const entry = liveTask(TaskRequest.parse(row.request), rollouts.map((r) => r.id), results, row.status === "cancelling" ? "cancelling" : "running");
      this.live.set(row.taskId, entry);
      await this.maybeDone(row.taskId, entry);
    }
  }

  /** Stores the task and its rollouts, then queues them; 409 while a task of that id is live. */
  async submit({ request, harness, strategy }: AcceptedTask): Promise<SubmitOutcome> {
    const existing = this.live.get(request.task_id);
    if (existing) return { accepted: false, status: 409, detail: `task ${request.task_id} is already ${existing.phase}` };
    const ids = Array.from({ length: request.num_samples }, () => `ses_${randomBytes(12).toString("hex")}`);
    // Reserved before the store write, so a second submit of the id in the meantime is refused.
    const entry = liveTask(request, ids, [], "running");
    this.live.set(request.task_id, entry);
    try {
      await this.deps.store.createTask(
        request.task_id,
        request as Record<string, unknown>,
        ids.map((id, sampleIndex) => ({ id, sampleIndex, priority: request.dispatch_priority })),
      );
    } catch (err) {
      // Nothing was stored: nothing stays in memory either.
      this.live.delete(request.task_id);
      entry.end();
      throw err;
    }
    ids.forEach((id, sampleIndex) => this.deps.pipeline.submit(newRollout({ id, taskId: request.task_id, sampleIndex, request, harness, strategy })));
    return { accepted: true };
  }

  /** The pipeline reports each stored result here. */
  async onResult(result: SessionResult): Promise<void> {
    const entry = this.live.get(result.task_id);
    if (!entry) return;
    entry.results.push(result);
    const threshold = entry.request.early_stop_min_usable_sessions;
    if (entry.phase === "running" && threshold != null && entry.results.filter(isUsableResult).length >= threshold) {
      for (const id of entry.rolloutIds) this.deps.pipeline.stop(id, "early_stop");
    }
    await this.maybeDone(result.task_id, entry);
  }

  /** DELETE /rollout/task/{id}: stops every rollout and answers once the task is `cancelled`. */
  async cancel(taskId: string): Promise<TaskStatus | undefined> {
    const entry = this.live.get(taskId);
    if (!entry) return this.status(taskId);
    if (entry.phase === "running") {
      entry.phase = "cancelling";
      await this.deps.store.setTaskStatus(taskId, "cancelling", false);
      for (const id of entry.rolloutIds) this.deps.pipeline.stop(id, "cancelled");
    }
    await entry.ended;
    return this.status(taskId);
  }

  async status(taskId: string): Promise<TaskStatus | undefined> {
    const entry = this.live.get(taskId);
    if (entry) return view(taskId, entry.phase, entry.rolloutIds.length, entry.results);
    if (!isApiTask(taskId)) return undefined;
    const row = await this.deps.store.task(taskId);
    if (!row) return undefined;
    const results = (await this.deps.store.results(taskId)).map((r) => SessionResult.parse(r));
    const phase: TaskPhase = row.status === "cancelled" || row.status === "cancelling" ? "cancelled" : row.status === "failed" ? "failed" : "running";
    return view(taskId, phase, await this.deps.store.rolloutCount(taskId), results);
  }

  /** Live tasks per status word. */
  liveCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const e of this.live.values()) counts[e.phase] = (counts[e.phase] ?? 0) + 1;
    return counts;
  }

  private async maybeDone(taskId: string, entry: LiveTask): Promise<void> {
    if (entry.results.length < entry.rolloutIds.length || entry.ending) return;
    entry.ending = true;
    const final = entry.phase === "cancelling" ? "cancelled" : "completed";
    await this.deps.store.setTaskStatus(taskId, final, true);
    this.live.delete(taskId);
    entry.end();
    const kept = final === "cancelled" ? entry.results.filter(finishedBeforeCancel) : entry.results;
    this.deps.onTaskDone({ task_id: taskId, status: final, results: kept, result_paths: [] }, entry.request);
  }
}

function view(taskId: string, phase: TaskPhase, total: number, results: SessionResult[]): TaskStatus {
  const kept = phase === "cancelling" || phase === "cancelled" ? results.filter(finishedBeforeCancel) : [...results];
  return taskStatus(taskId, phase, total, kept);
}
