import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RolloutState } from "./states.ts";
import { recoverUnfinished } from "./recovery.ts";
import { testNode, until, type TestNode } from "../../test/support/pipeline/harness.ts";

let node: TestNode | undefined;
afterEach(async () => {
  await node?.close();
  node = undefined;
});

/** Holds every stage open (long sleeps that honour the abort signal) so a rollout can be caught in any of them. */
function slowEverything(n: TestNode): void {
  n.pool.startMs = 60_000;
  n.preparer.ms = 60_000;
  n.runner.turnMs = 60_000;
  n.evaluator.ms = 60_000;
}

describe("cancellation frees everything at every stage", () => {
  const stages: { state: RolloutState; arrange(n: TestNode): void }[] = [
    { state: "QUEUED", arrange: (n) => void (n.pool.startMs = 60_000) },
    { state: "INIT", arrange: slowEverything },
    { state: "READY", arrange: (n) => slowEverything(n) },
    {
      state: "RUN",
      arrange: (n) => {
        n.runner.turnMs = 60_000;
      },
    },
    {
      state: "POSTRUN",
      arrange: (n) => {
        n.evaluator.ms = 60_000;
      },
    },
  ];
  for (const { state, arrange } of stages) {
    test(`in ${state}`, async () => {
      const isReady = state === "READY";
      node = await testNode(state === "QUEUED" ? { initWorkers: 1 } : isReady ? { runWorkers: 1 } : {});
      arrange(node);
      if (isReady) {
        // One rollout occupies the only run slot; the second waits READY.
        node.pool.startMs = 1;
        node.preparer.ms = 1;
      }
      await node.submit({ task_id: "c", num_samples: state === "QUEUED" || isReady ? 2 : 1 });
      const target = () => node!.pipeline.liveRollouts().find((r) => r.state === state);
      await until(() => target() !== undefined);
      const t0 = performance.now();
      // DELETE answers once every session has stopped (as Polar's RolloutManager does).
      const status = await node.tasks.cancel("c");
      expect(performance.now() - t0).toBeLessThan(3_000);
      expect(status).toMatchObject({ status: "cancelled", total_sessions: state === "QUEUED" || isReady ? 2 : 1, completed_sessions: 0, results: [] });
      const done = await node.waitDone("c");
      expect(done.status).toBe("cancelled");
      expect(done.results).toEqual([]);
      for (const r of await node.repo.rolloutsOf("c")) {
        const stored = await node.repo.result(r.id);
        expect(stored?.error).toStartWith("cancelled:");
        expect((await node.repo.events(r.id)).at(-1)?.toState).toBe("CANCELLED");
      }
      expect(node.pool.leftovers()).toBe(0);
      for (const id of node.gateway.opened) expect(node.gateway.closed.has(id)).toBe(true);
      expect((await node.tasks.status("c"))?.status).toBe("cancelled");
    }, 30_000);
  }

  test("a cancel keeps the sessions that had finished and drops the ones it stopped", async () => {
    node = await testNode({ runWorkers: 1 });
    let started = 0;
    node.runner.hold = () => (started++ < 1 ? undefined : new Promise(() => {}));
    await node.submit({ task_id: "keep", num_samples: 2 });
    await until(
      () => node!.done.length === 0 && node!.pipeline.liveRollouts().length === 1 && node!.pipeline.liveRollouts()[0]!.state === "RUN" && started === 2,
    );
    const status = await node.tasks.cancel("keep");
    expect(status).toMatchObject({ status: "cancelled", total_sessions: 2, completed_sessions: 1 });
    expect(status!.results.map((r) => r.status)).toEqual(["COMPLETED"]);
    expect((await node.waitDone("keep")).results).toHaveLength(1);
  }, 30_000);

  test("a task id still running conflicts; a finished one may be submitted again", async () => {
    node = await testNode();
    node.runner.turnMs = 200;
    expect(await node.submit({ task_id: "dup" })).toEqual({ accepted: true });
    expect(await node.submit({ task_id: "dup" })).toMatchObject({ accepted: false, status: 409 });
    const first = await node.waitDone("dup");
    node.done.length = 0;
    node.runner.turnMs = 1;
    expect(await node.submit({ task_id: "dup", num_samples: 2 })).toEqual({ accepted: true });
    expect((await node.waitDone("dup")).results).toHaveLength(2);
    // The earlier run's results are kept, under an id no request can name.
    const kept = (await node.repo.tasksIn(["completed"])).filter((t) => t.taskId.startsWith("dup#"));
    expect(kept).toHaveLength(1);
    expect((await node.repo.results(kept[0]!.taskId)).map((r) => r.session_id)).toEqual(first.results.map((r) => r.session_id));
  }, 30_000);
});

describe("early stop", () => {
  test("once enough results are usable the stragglers stop and come back as ERROR results", async () => {
    node = await testNode({ runWorkers: 4 });
    let started = 0;
    node.runner.hold = () => (started++ < 2 ? undefined : new Promise(() => {}));
    await node.submit({ task_id: "es", num_samples: 4, early_stop_min_usable_sessions: 2 });
    const done = await node.waitDone("es");
    expect(done.status).toBe("completed");
    expect(done.results).toHaveLength(4);
    expect(done.results.filter((r) => r.status === "COMPLETED")).toHaveLength(2);
    const stopped = done.results.filter((r) => r.status === "ERROR");
    expect(stopped).toHaveLength(2);
    for (const r of stopped) expect(r.error).toStartWith("early_stop:");
    expect(node.pool.leftovers()).toBe(0);
  }, 30_000);
});

describe("restart", () => {
  test("unfinished rollouts of a dead node are reported ERROR (node restarted) and their task completes", async () => {
    const db = join(mkdtempSync(join(tmpdir(), "polar-restart-")), "node.db");
    const first = await testNode({}, db);
    first.runner.turnMs = 60_000;
    first.evaluator.rewards = [1];
    first.runner.hold = null;
    await first.submit({ task_id: "r1", num_samples: 2, metadata: { group_id: 7, policy_version: 3, tags: ["a"] } });
    await until(() => first.pipeline.liveRollouts().every((r) => r.state === "RUN"));
    // Simulate the crash: drop the process's memory without letting the pipeline finish anything.
    first.store.close();

    node = await testNode({}, db);
    let removed = 0;
    const report = await recoverUnfinished(node.repo, "node-test", async () => ++removed);
    expect(report).toEqual({ sandboxesRemoved: 1, rolloutsFailed: 2 });
    await node.tasks.load();
    const done = await node.waitDone("r1");
    // Every session ended (whatever their status): Polar's word is `completed`.
    expect(done.status).toBe("completed");
    for (const r of done.results) {
      expect(r.status).toBe("ERROR");
      expect(r.metadata).toMatchObject({ group_id: 7, policy_version: 3, tags: ["a"] });
      expect(r.error).toStartWith("node_restarted:");
      expect(r.trajectory.metadata.training_filter).toEqual({ masked: true, reason: "session_error" });
      expect((await node.repo.events(r.session_id)).map((e) => e.toState)).toEqual(["QUEUED", "INIT", "READY", "RUN", "ERROR"]);
    }
    expect(await node.repo.unfinishedRollouts()).toEqual([]);
  }, 30_000);
});
