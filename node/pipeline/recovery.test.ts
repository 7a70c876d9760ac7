// What a restarted node does with its unfinished rollouts (a real store): each ends as a masked
// node_restarted ERROR; such a result, and a shutdown's, is recognised as an interruption (what
// the coordinator link reports instead of a result), and no other result is.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TaskRequest } from "../../protocol/rollout.ts";
import { openNodeStore, type OpenedStore } from "../store/db.ts";
import { RolloutsRepo } from "../store/rollouts-repo.ts";
import { interruptionCause, recoverUnfinished } from "./recovery.ts";
import { maskedResult, RolloutFailure } from "./result.ts";
import { newRollout } from "./rollout.ts";

let store: OpenedStore | undefined;
afterEach(() => {
  store?.close();
  store = undefined;
});

describe("recovery", () => {
  test("unfinished rollouts end as node_restarted ERRORs, which read as interruptions; a shutdown does too, other failures do not", async () => {
    store = await openNodeStore(join(mkdtempSync(join(tmpdir(), "polar-recovery-")), "node.db"));
    const repo = new RolloutsRepo(store.db);
    const request = TaskRequest.parse({ task_id: "t", instruction: "x", agent: { harness: "mini" } });
    await repo.createTask("t", request, [
      { id: "ses_run", sampleIndex: 0, priority: 0 },
      { id: "ses_queued", sampleIndex: 1, priority: 0 },
    ]);
    await repo.recordTransition("ses_run", 1, "QUEUED", "INIT", new Date().toISOString());
    const report = await recoverUnfinished(repo, "node-1", async () => 2);
    expect(report).toEqual({ sandboxesRemoved: 2, rolloutsFailed: 2 });
    for (const id of ["ses_run", "ses_queued"]) {
      const stored = (await repo.result(id))!;
      expect(stored.status).toBe("ERROR");
      expect(interruptionCause(stored)).toBe("node_restarted");
    }
    const rollout = newRollout({ id: "ses_x", taskId: "t", sampleIndex: 0, request, harness: "mini", strategy: "per-call" });
    expect(interruptionCause(maskedResult(rollout, "node-1", new RolloutFailure("shutdown", "stopped: shutdown"), null))).toBe("shutdown");
    for (const cause of ["cancelled", "prepare", "task_timeout", "engine_unreachable"] as const) {
      expect(interruptionCause(maskedResult(rollout, "node-1", new RolloutFailure(cause, "x"), null))).toBeNull();
    }
    const restarted = (await repo.result("ses_run"))!;
    expect(interruptionCause({ status: "COMPLETED", trajectory: { ...restarted.trajectory, status: "COMPLETED" } })).toBeNull();
  });
});
