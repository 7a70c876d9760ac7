// The rollout state machine's mover announces every move through a guarded emit: a listener
// that throws is reported and cannot fail the transition (nor the rollout), on a real store.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { announceTransitions, newNodeEvents, type NodeEvents } from "../events.ts";
import { openNodeStore, type OpenedStore } from "../store/db.ts";
import { RolloutsRepo } from "../store/rollouts-repo.ts";
import { newRollout, RolloutTransitions } from "./rollout.ts";
import { testNode, type TestNode } from "../../test/support/pipeline/harness.ts";
import { TaskRequest } from "../../protocol/rollout.ts";

let store: OpenedStore | undefined;
let node: TestNode | undefined;
afterEach(async () => {
  store?.close();
  await node?.close();
  store = node = undefined;
});

describe("rollout transitions", () => {
  test("a throwing listener does not fail the move: the state changes, is stored, the other listeners hear of it and the error is reported", async () => {
    store = await openNodeStore(join(mkdtempSync(join(tmpdir(), "polar-transitions-")), "node.db"));
    const repo = new RolloutsRepo(store.db);
    const reported: { event: string; message: string }[] = [];
    const transitions = new RolloutTransitions(repo, (event, err) => void reported.push({ event, message: (err as Error).message }));
    const request = TaskRequest.parse({ task_id: "t", instruction: "x", agent: { harness: "mini" } });
    await repo.createTask("t", request, [{ id: "ses_1", sampleIndex: 0, priority: 0 }]);
    const rollout = newRollout({ id: "ses_1", taskId: "t", sampleIndex: 0, request, harness: "mini", strategy: "per-call" });
    const heard: string[] = [];
    transitions.onTransition(() => {
      throw new Error("observer bug");
    });
    transitions.onTransition((r, from) => void heard.push(`${from}→${r.state}`));
    await transitions.move(rollout, "INIT");
    await transitions.move(rollout, "ERROR", { cause: "internal" });
    expect(rollout.state).toBe("ERROR");
    expect(heard).toEqual(["QUEUED→INIT", "INIT→ERROR"]);
    expect(reported).toEqual([
      { event: "transition", message: "observer bug" },
      { event: "transition", message: "observer bug" },
    ]);
    expect((await repo.events("ses_1")).map((e) => e.toState)).toEqual(["QUEUED", "INIT", "ERROR"]);
    // The table still guards the mover: a terminal rollout cannot move again.
    await expect(transitions.move(rollout, "RUN")).rejects.toThrow(/no transition ERROR → RUN/);
  });

  test("through the pipeline: a rollout completes with a throwing node-event listener attached, and every move is announced with its stage durations", async () => {
    node = await testNode();
    const events = newNodeEvents(() => {});
    const moves: NodeEvents["rollout.state_changed"][] = [];
    events.on("rollout.state_changed", () => {
      throw new Error("observer bug");
    });
    events.on("rollout.state_changed", (e) => void moves.push(e));
    announceTransitions(node.pipeline.transitions, events);
    await node.submit({ task_id: "task-1" });
    const done = await node.waitDone("task-1");
    expect(done.status).toBe("completed");
    expect(done.results[0]!.status).toBe("COMPLETED");
    expect(moves.map((m) => m.to)).toEqual(["INIT", "READY", "RUN", "POSTRUN", "COMPLETED"]);
    const last = moves.at(-1)!;
    expect(last.from).toBe("POSTRUN");
    expect(Object.keys(last.stage_ms).sort()).toEqual(["init_ms", "postrun_ms", "postrun_queue_ms", "ready_queue_ms", "run_ms"]);
    expect(last.elapsed_ms).toBeGreaterThanOrEqual(0);
  });
});
