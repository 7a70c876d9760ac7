import { afterEach, describe, expect, test } from "bun:test";
import { RolloutTrace, SessionResult, STAGE_TIMINGS } from "../../protocol/rollout.ts";
import { testNode, until, type TestNode } from "../../test/support/pipeline/harness.ts";

let node: TestNode | undefined;
afterEach(async () => {
  await node?.close();
  node = undefined;
});

describe("pipeline: a task of 4 samples", () => {
  test("runs every stage, stores events and results, scores each trace, frees every sandbox", async () => {
    node = await testNode();
    node.evaluator.rewards = [1, 0, 1, 0];
    await node.submit({ task_id: "t1", num_samples: 4, metadata: { group_id: "g1", policy_version: 3, rollout_step: 7 } });
    const done = await node.waitDone("t1");
    expect(done.status).toBe("completed");
    expect(done.results).toHaveLength(4);
    const rewards = done.results.map((r) => r.metadata.reward).sort();
    expect(rewards).toEqual([0, 0, 1, 1]);
    for (const raw of done.results) {
      const r = SessionResult.parse(raw);
      expect(r.status).toBe("COMPLETED");
      expect(r.node_id).toBe("node-test");
      expect(r.metadata).toMatchObject({ group_id: "g1", policy_version: 3, rollout_step: 7, harness: "mini", builder_strategy: "per-call" });
      expect(r.trajectory.traces).toHaveLength(1);
      const trace = RolloutTrace.parse(r.trajectory.traces[0]);
      expect(trace.reward).toBe(r.metadata.reward as number);
      expect(trace.loss_mask).toEqual([1, 1, 1, 0]);
      expect(trace.response_logprobs).toEqual([-0.25, -0.25, -0.25, 0]);
      for (const key of STAGE_TIMINGS) {
        expect(r.timing[key]).toBeGreaterThan(0);
      }
      // Stored before reported, with every state change.
      expect(SessionResult.parse(await node.repo.result(r.session_id)).session_id).toBe(r.session_id);
      const events = await node.repo.events(r.session_id);
      expect(events.map((e) => e.toState)).toEqual(["QUEUED", "INIT", "READY", "RUN", "POSTRUN", "COMPLETED"]);
    }
    expect(new Set(done.results.map((r) => r.session_id)).size).toBe(4);
    // 4 agent sandboxes + 4 fresh evaluation sandboxes, none left.
    expect(node.pool.taken).toHaveLength(8);
    expect(node.pool.leftovers()).toBe(0);
    expect(node.gateway.closed.size).toBe(4);
    expect((await node.repo.task("t1"))?.status).toBe("completed");
  }, 30_000);

  test("a harness's non-zero exit is the agent's outcome: scored, not masked", async () => {
    node = await testNode();
    node.runner.exitCode = 3;
    node.evaluator.rewards = [0];
    await node.submit({ task_id: "t-exit", num_samples: 1 });
    const [r] = (await node.waitDone("t-exit")).results;
    expect(r!.status).toBe("COMPLETED");
    expect(r!.metadata.agent).toEqual({ exit_code: 3, timed_out: false, error: null });
    expect(r!.trajectory.traces[0]!.loss_mask).toContain(1);
  }, 30_000);
});

describe("pipeline: scheduling", () => {
  test("INIT runs ahead of RUN capacity up to the READY backlog (prewarming)", async () => {
    node = await testNode({ initWorkers: 8, runWorkers: 1, readyBacklog: 2 });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    node.runner.hold = () => gate;
    let maxReady = 0;
    node.pipeline.transitions.onTransition(() => (maxReady = Math.max(maxReady, node!.pipeline.metrics().ready_depth)));
    await node.submit({ task_id: "t-pre", num_samples: 6 });
    await until(() => node!.pipeline.metrics().ready_depth === 2 && node!.pipeline.metrics().run_inflight === 1);
    await Bun.sleep(50);
    const m = node.pipeline.metrics();
    expect(m).toMatchObject({ run_inflight: 1, ready_depth: 2, init_inflight: 0, init_queue_depth: 3 });
    expect(maxReady).toBe(2);
    release();
    expect((await node.waitDone("t-pre")).results).toHaveLength(6);
  }, 30_000);

  test("higher dispatch priority enters INIT first; FIFO within a priority", async () => {
    node = await testNode({ initWorkers: 1, runWorkers: 1, readyBacklog: 0 });
    const order: string[] = [];
    node.pipeline.transitions.onTransition((r) => {
      if (r.state === "INIT") order.push(r.taskId);
    });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    node.runner.hold = (req) => (req.instruction === "blocker" ? gate : undefined);
    await node.submit({ task_id: "blocker", instruction: "blocker", num_samples: 1 });
    await until(() => node!.pipeline.metrics().run_inflight === 1);
    await node.submit({ task_id: "low-a", num_samples: 1, dispatch_priority: 0 });
    await node.submit({ task_id: "mid", num_samples: 1, dispatch_priority: 50 });
    await node.submit({ task_id: "low-b", num_samples: 1, dispatch_priority: 0 });
    await node.submit({ task_id: "high", num_samples: 1, dispatch_priority: 100 });
    release();
    await Promise.all(["low-a", "mid", "low-b", "high"].map((t) => node!.waitDone(t)));
    expect(order).toEqual(["blocker", "high", "mid", "low-a", "low-b"]);
  }, 30_000);

  test("queued demand per image reaches the pool and returns to 0", async () => {
    node = await testNode({ initWorkers: 1, runWorkers: 1, readyBacklog: 0 });
    await node.submit({ task_id: "t-demand", num_samples: 3, runtime: { image: "img-a" } });
    await node.waitDone("t-demand");
    const a = node.pool.demand.filter((d) => d.image === "img-a").map((d) => d.queued);
    expect(Math.max(...a)).toBe(2);
    expect(a.at(-1)).toBe(0);
  }, 30_000);
});

describe("pipeline: timeouts", () => {
  test("an agent timeout keeps the calls recorded so far: trainable, reward 0, not evaluated", async () => {
    node = await testNode();
    node.runner.turns = 1000;
    node.runner.turnMs = 10;
    await node.submit({ task_id: "t-agent", num_samples: 1, metadata: { agent_timeout: 0.15 } });
    const [r] = (await node.waitDone("t-agent")).results;
    expect(r!.status).toBe("COMPLETED");
    expect(r!.trajectory.metadata.agent_result).toEqual({ status: "timeout", timeout_source: "agent" });
    expect(r!.trajectory.metadata.training_filter).toEqual({ reason: "agent_timeout", trainable: true, masked: false });
    const trace = r!.trajectory.traces[0]!;
    expect(trace.reward).toBe(0);
    expect(trace.loss_mask.filter((m) => m === 1).length).toBeGreaterThan(0);
    expect(trace.metadata.training_filter).toEqual({ reason: "agent_timeout", trainable: true, masked: false });
    expect(node.evaluator.evaluated).toHaveLength(0);
  }, 30_000);

  test("the task timeout (from INIT) yields a masked TIMEOUT", async () => {
    node = await testNode();
    node.runner.turns = 1000;
    node.runner.turnMs = 10;
    await node.submit({ task_id: "t-task", num_samples: 1, timeout_seconds: 0.2 });
    const [r] = (await node.waitDone("t-task")).results;
    expect(r!.status).toBe("TIMEOUT");
    expect(r!.trajectory.metadata.training_filter).toEqual({ masked: true, reason: "session_timeout" });
    expect(r!.error).toStartWith("task_timeout:");
    for (const t of r!.trajectory.traces) expect(t.loss_mask.every((m) => m === 0)).toBe(true);
    expect((await node.repo.events(r!.session_id)).at(-1)?.toState).toBe("TIMEOUT");
    expect(node.pool.leftovers()).toBe(0);
  }, 30_000);
});

describe("pipeline: infrastructure failures are masked and named", () => {
  const cases = [
    ["sandbox_start", (n: TestNode) => void (n.pool.failTake = new Error("no such image"))],
    ["prepare", (n: TestNode) => void (n.preparer.fail = new Error("git clone failed"))],
    ["evaluator", (n: TestNode) => void (n.evaluator.crash = new Error("pytest crashed"))],
    ["engine_unreachable", (n: TestNode) => void (n.gateway.engineFailureCount = 2)],
  ] as const;
  for (const [cause, arrange] of cases) {
    test(
      cause,
      async () => {
        node = await testNode();
        arrange(node);
        await node.submit({ task_id: `t-${cause}`, num_samples: 1 });
        const [r] = (await node.waitDone(`t-${cause}`)).results;
        expect(r!.status).toBe("ERROR");
        expect(r!.error).toStartWith(`${cause}:`);
        expect(r!.metadata.failure).toMatchObject({ cause });
        expect(r!.trajectory.metadata.training_filter).toEqual({ masked: true, reason: "session_error" });
        for (const t of r!.trajectory.traces) {
          expect(t.loss_mask.every((m) => m === 0)).toBe(true);
          expect(t.response_logprobs.every((lp) => lp === 0)).toBe(true);
          expect(t.reward).toBe(0);
          expect(t.metadata.training_filter).toEqual({ masked: true, reason: "session_error" });
        }
        expect((await node.repo.events(r!.session_id)).at(-1)?.toState).toBe("ERROR");
        expect(node.pool.leftovers()).toBe(0);
      },
      30_000,
    );
  }
});
