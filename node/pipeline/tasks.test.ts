import { afterEach, expect, test } from "bun:test";
import { AssignmentsRepo } from "../store/assignments-repo.ts";
import { FEED_WINDOW } from "./tasks.ts";
import { testNode, type TestNode } from "../../test/support/pipeline/harness.ts";
import { TaskRequest } from "../../protocol/rollout.ts";

let node: TestNode | undefined;
afterEach(async () => {
  await node?.close();
  node = undefined;
});

test("store first, then memory: a submit whose store write fails leaves nothing behind, and the id stays free", async () => {
  node = await testNode();
  const createTask = node.repo.createTask.bind(node.repo);
  let failures = 1;
  node.repo.createTask = async (...args) => {
    if (failures-- > 0) throw new RangeError("Maximum call stack size exceeded");
    return createTask(...args);
  };
  await expect(node.submit({ task_id: "t" })).rejects.toThrow(RangeError);
  expect(await node.tasks.status("t")).toBeUndefined();
  expect(node.pipeline.liveRollouts()).toEqual([]);
  expect(await node.submit({ task_id: "t" })).toEqual({ accepted: true });
  expect((await node.waitDone("t")).status).toBe("completed");
});

test("a task at the num_samples bound: stored in one write, handed to the pipeline a window at a time, every sample accounted for on cancel", async () => {
  node = await testNode({ initWorkers: 1, runWorkers: 1 });
  node.pool.startMs = 60_000;
  expect(await node.submit({ task_id: "wide", num_samples: 4096 })).toEqual({ accepted: true });
  expect(await node.repo.rolloutCount("wide")).toBe(4096);
  expect(node.pipeline.liveRollouts()).toHaveLength(FEED_WINDOW);
  expect(await node.tasks.status("wide")).toMatchObject({ status: "running", total_sessions: 4096, completed_sessions: 0 });
  expect(await node.tasks.cancel("wide")).toMatchObject({ status: "cancelled", total_sessions: 4096, completed_sessions: 0 });
  expect(await node.repo.unfinishedRollouts()).toEqual([]);
}, 240_000);

test("finished tasks are pruned after their retention, never a rollout a coordinator has not acknowledged", async () => {
  node = await testNode();
  expect(await node.submit({ task_id: "old", metadata: { group_id: 1 } })).toEqual({ accepted: true });
  await node.waitDone("old");
  const assignments = new AssignmentsRepo(node.store.db);
  await node.repo.createTask("coordinator:ro_1.1", TaskRequest.parse({ task_id: "t", instruction: "x", agent: { harness: "mini" } }), [
    { id: "ro_1.1", sampleIndex: 0, priority: 0 },
  ]);
  await assignments.insert({ rolloutId: "ro_1.1", coordinatorRolloutId: "ro_1", attempt: 1, groupId: "grp", taskId: "t" });
  await node.repo.setTaskStatus("coordinator:ro_1.1", "completed", true);
  const later = new Date(Date.now() + 60_000).toISOString();
  // Before the cutoff nothing goes; after it the finished API task goes, the unacknowledged assignment stays.
  expect(await node.repo.pruneFinishedTasks(new Date(0).toISOString())).toBe(0);
  expect(await node.repo.pruneFinishedTasks(later)).toBe(1);
  expect(await node.tasks.status("old")).toBeUndefined();
  expect(await node.repo.task("coordinator:ro_1.1")).toBeDefined();
  await assignments.acknowledge("ro_1", 1);
  expect(await node.repo.pruneFinishedTasks(later)).toBe(1);
});
