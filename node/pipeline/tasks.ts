// Why: Polar's task view over the pipeline — a task of `num_samples` rollouts with server-minted
// session ids, handed to the pipeline a window at a time, early stop once enough results are usable, a cancel that waits until every
// session has stopped, and one TaskResult handed on when the task ends. Live tasks are held in
// memory; finished ones are read back from the store, so they answer after a restart and cost
// no memory until they are pruned.
import { isStoreError } from "../../lib/store-errors.ts";
import type { StoreHealth } from "../store/store-health.ts";
import { randomBytes } from "node:crypto";
import { SessionResult, TASK_ID_PATTERN, TaskRequest, type TaskResult, type TaskStatus, type TaskStatusWord } from "../../protocol/rollout.ts";
import type { SubmitOutcome } from "../../lib/rollout-api/port.ts";
import type { AcceptedTask } from "../../lib/rollout-api/submission.ts";
import { isUsableResult, taskStatus, type TaskPhase } from "../../lib/rollout-api/task-status.ts";
import { resolveNames, type HarnessKind } from "../../protocol/harness-names.ts";
import type { Strategy } from "../../protocol/trace.ts";
import type { RolloutsRepo } from "../store/rollouts-repo.ts";
import type { Pipeline } from "./pipeline.ts";
import { newRollout } from "./rollout.ts";

/**
 * Rollouts of one task handed to the pipeline ahead of their results. The rest wait as stored
 * rows and are created when earlier ones finish, so a task of thousands of samples costs the
 * pipeline (whose queues are walked per admission) no more than a task of this many.
 */
export const FEED_WINDOW = 64;

interface LiveTask {
  request: TaskRequest;
  harness: HarnessKind;
  strategy: Strategy;
  phase: "running" | "cancelling";
  rolloutIds: string[];
  /** Rollouts handed to the pipeline so far (sample indexes below this). */
  fed: number;
  results: SessionResult[];
  /** Set (synchronously) by the result that completes the task, so only one ends it. */
  ending: boolean;
  /** Resolves once the task has ended (its final status stored). */
  ended: Promise<void>;
  end(): void;
}

export interface TaskBookDeps {
  store: RolloutsRepo;
  /** Told of every store write that failed: a task is then refused (503), and a finishing one still ends. */
  storeHealth?: StoreHealth;
  pipeline: Pipeline;
  /** Called once per finished task, after its final status is stored. */
  onTaskDone(result: TaskResult, request: TaskRequest): void;
  /** Told when a task and its session ids are stored, and after each of its results (events). */
  onTaskSubmitted?(request: TaskRequest, sessionIds: string[]): void;
  onTaskProgress?(taskId: string, completed: number, total: number): void;
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

function liveTask(task: AcceptedTask, rolloutIds: string[], results: SessionResult[], phase: LiveTask["phase"], fed: number): LiveTask {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  return { ...task, phase, rolloutIds, fed, results, ending: false, ended, end };
}

export class TaskBook {
  private readonly live = new Map<string, LiveTask>();

  /** Ended tasks whose end the store could not record yet. */
  private readonly unsaved = new Map<string, { entry: LiveTask; final: "completed" | "cancelled" }>();

  constructor(private readonly deps: TaskBookDeps) {
    deps.storeHealth?.onRecovered(() => void this.storeUnsaved().catch(() => undefined));
  }

  /** Reloads the tasks still open in the store (after a restart every rollout of theirs has a result). */
  async load(): Promise<void> {
    for (const row of await this.deps.store.tasksIn(["running", "cancelling"])) {
      if (!isApiTask(row.taskId)) continue;
      const rollouts = await this.deps.store.rolloutsOf(row.taskId);
      const results = (await this.deps.store.results(row.taskId)).map((r) => SessionResult.parse(r));
      const request = TaskRequest.parse(row.request);
      const names = resolveNames(request.agent.harness, request.builder.strategy);
      if (!names.ok) {
        // Stored by a Polar that knew more names: this one cannot run it, and never runs it as another.
        await this.deps.store.setTaskStatus(row.taskId, "failed", true);
        continue;
      }
      const task = { request, harness: names.harness, strategy: names.strategy };
      // After a restart every rollout has a result (recovery stored the unfinished ones): none is fed again.
      const entry = liveTask(
        task,
        rollouts.map((r) => r.id),
        results,
        row.status === "cancelling" ? "cancelling" : "running",
        rollouts.length,
      );
      this.live.set(row.taskId, entry);
      await this.maybeDone(row.taskId, entry);
    }
  }

  /** Stores the task and its rollouts, then queues them; 409 while a task of that id is live. */
  async submit(task: AcceptedTask): Promise<SubmitOutcome> {
    const { request } = task;
    const existing = this.live.get(request.task_id);
    if (existing) return { accepted: false, status: 409, detail: `task ${request.task_id} is already ${existing.phase}` };
    const ids = Array.from({ length: request.num_samples }, () => `ses_${randomBytes(12).toString("hex")}`);
    // Reserved before the store write, so a second submit of the id in the meantime is refused.
    const entry = liveTask(task, ids, [], "running", 0);
    this.live.set(request.task_id, entry);
    try {
      await this.deps.store.createTask(
        request.task_id,
        request,
        ids.map((id, sampleIndex) => ({ id, sampleIndex, priority: request.dispatch_priority })),
      );
    } catch (err) {
      // Nothing was stored: nothing stays in memory either.
      this.live.delete(request.task_id);
      entry.end();
      if (!this.deps.storeHealth || !isStoreError(err)) throw err;
      const failure = this.deps.storeHealth.failed(err, "storing a submitted task", { task_id: request.task_id });
      return { accepted: false, status: 503, detail: `the node's store cannot write (${failure.description}); no task is taken until it can` };
    }
    this.deps.onTaskSubmitted?.(request, ids);
    this.feed(request.task_id, entry);
    return { accepted: true };
  }

  /** The pipeline reports each stored result here. */
  async onResult(result: SessionResult): Promise<void> {
    const entry = this.live.get(result.task_id);
    if (!entry) return;
    entry.results.push(result);
    this.deps.onTaskProgress?.(result.task_id, entry.results.length, entry.rolloutIds.length);
    const threshold = entry.request.early_stop_min_usable_sessions;
    if (entry.phase === "running" && threshold != null && entry.results.filter(isUsableResult).length >= threshold) {
      this.stopAll(result.task_id, entry, "early_stop");
    } else if (entry.phase === "running") {
      this.feed(result.task_id, entry);
    }
    await this.maybeDone(result.task_id, entry);
  }

  /** DELETE /rollout/task/{id}: stops every rollout and answers once the task is `cancelled`. */
  async cancel(taskId: string): Promise<TaskStatus | undefined> {
    const entry = this.live.get(taskId);
    if (!entry) return this.status(taskId);
    if (entry.phase === "running") {
      entry.phase = "cancelling";
      await this.storeStatus(taskId, "cancelling", false);
      this.stopAll(taskId, entry, "cancelled");
    }
    await entry.ended;
    return this.status(taskId);
  }

  async status(taskId: string): Promise<TaskStatus | undefined> {
    const entry = this.live.get(taskId);
    if (entry) return view(taskId, entry.phase, entry.rolloutIds.length, entry.results);
    const unsaved = this.unsaved.get(taskId);
    // As a stored row reads: every session ended is `completed`; a cancelled task stays cancelled.
    if (unsaved) return view(taskId, unsaved.final === "cancelled" ? "cancelled" : "running", unsaved.entry.rolloutIds.length, unsaved.entry.results);
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

  /** Hands the pipeline the task's next rollouts, up to FEED_WINDOW ahead of its results. */
  private feed(taskId: string, entry: LiveTask): void {
    while (entry.fed < entry.rolloutIds.length && entry.fed - entry.results.length < FEED_WINDOW) this.start(taskId, entry);
  }

  private start(taskId: string, entry: LiveTask): string {
    const sampleIndex = entry.fed++;
    const id = entry.rolloutIds[sampleIndex]!;
    this.deps.pipeline.submit(newRollout({ id, taskId, sampleIndex, request: entry.request, harness: entry.harness, strategy: entry.strategy }));
    return id;
  }

  /** Stops every rollout of the task; the ones never fed start stopped, so each still ends with a stored result. */
  private stopAll(taskId: string, entry: LiveTask, reason: "cancelled" | "early_stop"): void {
    for (const id of entry.rolloutIds.slice(0, entry.fed)) this.deps.pipeline.stop(id, reason);
    while (entry.fed < entry.rolloutIds.length) this.deps.pipeline.stop(this.start(taskId, entry), reason);
  }

  /** A task's status in the store; a failing store is reported and the task moves on in memory (false). */
  private async storeStatus(taskId: string, status: TaskStatusWord, finished: boolean): Promise<boolean> {
    try {
      await this.deps.store.setTaskStatus(taskId, status, finished);
      return true;
    } catch (err) {
      if (!this.deps.storeHealth || !isStoreError(err)) throw err;
      this.deps.storeHealth.failed(err, `marking a task ${status}`, { task_id: taskId });
      return false;
    }
  }

  /** Ended tasks the store could not record, written once it can (their results again, then their status). */
  private async storeUnsaved(): Promise<void> {
    for (const [taskId, { entry, final }] of this.unsaved) {
      try {
        for (const r of entry.results) await this.deps.store.saveResult(r.session_id, taskId, r.status, r);
        await this.deps.store.setTaskStatus(taskId, final, true);
        this.unsaved.delete(taskId);
      } catch (err) {
        if (!isStoreError(err)) throw err;
        this.deps.storeHealth?.failed(err, "storing a task that ended while the store was failing", { task_id: taskId });
        return;
      }
    }
  }

  private async maybeDone(taskId: string, entry: LiveTask): Promise<void> {
    if (entry.results.length < entry.rolloutIds.length || entry.ending) return;
    entry.ending = true;
    const final = entry.phase === "cancelling" ? "cancelled" : "completed";
    // Not stored (a full disk): kept here, readable, until the store can take it.
    if (!(await this.storeStatus(taskId, final, true))) this.unsaved.set(taskId, { entry, final });
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
