// Outcomes through the rollout API with real sandboxes and the real mini agent: an agent timeout
// keeps the calls recorded so far (trainable, reward 0); an engine nobody answers is an
// infrastructure failure (masked, cause named).
import { afterAll, expect, test } from "bun:test";
import { RolloutTrace } from "../protocol/rollout.ts";
import { pollTask, startNodeStack, submit, type NodeStack } from "./helpers/node-stack.ts";
import { testNeeding } from "./helpers/host-tools.ts";

const stacks: NodeStack[] = [];
afterAll(async () => {
  for (const s of stacks) await s.stop();
}, 60_000);

// A Python task: the node checks at submit that its evaluation (pytest) can run here.
testNeeding("pytest")(
  "agent timeout: COMPLETED, trainable partial trajectory, reward 0, agent_result timeout",
  async () => {
    // Every LLM call takes ~1 s, so the agent is mid-task when its 3 s run out.
    const stack = await startNodeStack({}, {}, { ttftMs: 1_000 });
    stacks.push(stack);
    const taskId = "py-csv-trailing-empty-field";
    expect((await submit(stack.node.url, { task_id: taskId, agent: { harness: "mini" }, num_samples: 1, metadata: { agent_timeout: 3 } })).status).toBe(200);
    const done = await pollTask(stack.node.url, taskId, 120_000);
    const [r] = done.results;
    expect(r!.status).toBe("COMPLETED");
    expect(r!.trajectory.metadata.agent_result).toEqual({ status: "timeout", timeout_source: "agent" });
    expect(r!.trajectory.metadata.training_filter).toEqual({ reason: "agent_timeout", trainable: true, masked: false });
    expect(r!.metadata.reward).toBe(0);
    expect(r!.trajectory.traces.length).toBeGreaterThan(0);
    for (const raw of r!.trajectory.traces) {
      const t = RolloutTrace.parse(raw);
      expect(t.reward).toBe(0);
      expect(t.loss_mask.some((m) => m === 1)).toBe(true);
    }
    expect(r!.timing.agent_exec_ms).toBeGreaterThanOrEqual(3_000);
    expect(r!.timing.agent_exec_ms).toBeLessThan(30_000);
  },
  180_000,
);

test("engine unreachable: masked ERROR naming the cause", async () => {
  const stack = await startNodeStack({ engine: { urls: ["http://127.0.0.1:9"] } });
  stacks.push(stack);
  const taskId = "js-leap-year-century";
  expect((await submit(stack.node.url, { task_id: taskId, agent: { harness: "mini" }, num_samples: 1, metadata: { agent_timeout: 30 } })).status).toBe(200);
  const done = await pollTask(stack.node.url, taskId, 120_000);
  const [r] = done.results;
  expect(r!.status).toBe("ERROR");
  expect(r!.error).toStartWith("engine_unreachable:");
  expect(r!.trajectory.metadata.training_filter).toEqual({ masked: true, reason: "session_error" });
  for (const t of r!.trajectory.traces) expect(t.loss_mask.every((m) => m === 0)).toBe(true);
  // Every session ended (whatever its status): Polar's word is `completed`.
  expect(done.status).toBe("completed");
}, 180_000);
