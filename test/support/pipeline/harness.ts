// Why: every pipeline test builds the same thing — a real SQLite store, the pipeline, the task
// book and the scripted ports — and waits for tasks the way a trainer polls.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TaskRequest, type TaskRequestInput, type TaskResult } from "../../../protocol/rollout.ts";
import { openNodeStore, type OpenedStore } from "../../../node/store/db.ts";
import { RolloutsRepo } from "../../../node/store/rollouts-repo.ts";
import { builderStrategy, harnessKind } from "../../../protocol/harness-names.ts";
import { Pipeline, type PipelineConfig } from "../../../node/pipeline/pipeline.ts";
import { TaskBook } from "../../../node/pipeline/tasks.ts";
import type { SubmitOutcome } from "../../../lib/rollout-api/port.ts";
import { FakeEvaluator, FakeGateway, FakePool, FakePreparer, FakeRunner } from "./fakes.ts";

export interface TestNode {
  store: OpenedStore;
  repo: RolloutsRepo;
  pipeline: Pipeline;
  tasks: TaskBook;
  pool: FakePool;
  preparer: FakePreparer;
  gateway: FakeGateway;
  runner: FakeRunner;
  evaluator: FakeEvaluator;
  done: TaskResult[];
  submit(input: Partial<TaskRequestInput> & { task_id: string }): Promise<SubmitOutcome>;
  waitDone(taskId: string, timeoutMs?: number): Promise<TaskResult>;
  close(): Promise<void>;
}

export async function testNode(config: Partial<PipelineConfig> = {}, dbPath?: string): Promise<TestNode> {
  const store = await openNodeStore(dbPath ?? join(mkdtempSync(join(tmpdir(), "polar-pipe-")), "node.db"));
  const repo = new RolloutsRepo(store.db);
  const pool = new FakePool();
  const preparer = new FakePreparer();
  const gateway = new FakeGateway();
  const runner = new FakeRunner(gateway);
  const evaluator = new FakeEvaluator(pool);
  const done: TaskResult[] = [];
  const waiters = new Map<string, (r: TaskResult) => void>();
  let tasks: TaskBook;
  const pipeline = new Pipeline(
    { nodeId: "node-test", initWorkers: 4, runWorkers: 4, postrunWorkers: 4, readyBacklog: 2, ...config },
    { store: repo, pool, preparer, gateway, runner, evaluator, onResult: (result) => void tasks.onResult(result) },
  );
  tasks = new TaskBook({
    store: repo,
    pipeline,
    onTaskDone: (result) => {
      done.push(result);
      waiters.get(result.task_id)?.(result);
    },
  });
  return {
    store,
    repo,
    pipeline,
    tasks,
    pool,
    preparer,
    gateway,
    runner,
    evaluator,
    done,
    async submit(input) {
      const request = TaskRequest.parse({ instruction: "do it", agent: { harness: "mini" }, ...input });
      return tasks.submit({ request, harness: harnessKind(request.agent.harness)!, strategy: builderStrategy(request.builder.strategy)! });
    },
    waitDone(taskId, timeoutMs = 10_000) {
      const already = done.find((d) => d.task_id === taskId);
      if (already) return Promise.resolve(already);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`task ${taskId} did not finish in ${timeoutMs} ms`)), timeoutMs);
        waiters.set(taskId, (r) => {
          clearTimeout(timer);
          resolve(r);
        });
      });
    },
    async close() {
      await pipeline.close();
      store.close();
    },
  };
}

/** Polls until `check` holds (bounded), for states reached asynchronously. */
export async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const t0 = Date.now();
  while (!check()) {
    if (Date.now() - t0 > timeoutMs) throw new Error("condition not reached in time");
    await Bun.sleep(2);
  }
}
