// One SessionResult from node to trainer, typed at every hop: a real node (process runtime, the
// mock engine) under a real coordinator reports what it stored, and the trainer receives the same
// traces, metadata, node id and timing — parsed by the same schemas, no field lost or renamed; the
// coordinator keeps the node's result under its own ids. And a node never runs an assignment
// under another harness: one naming a harness (or builder) it does not know fails that rollout,
// stored and reported like any result.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TrainerClient } from "../clients/typescript/trainer-client.ts";
import { TOKENS, waitFor } from "./support/coordinator/cluster.ts";
import { localIds } from "../node/assignment-ids.ts";
import { startNode } from "../node/main.ts";
import { parseNodeConfig } from "../node/node-config.ts";
import { startMockEngine } from "../node/mock-engine/index.ts";
import { RolloutDetail } from "../protocol/admin.ts";
import { CoordinatorToNode, LINK_PROTOCOL_VERSION, NodeToCoordinator, ReportedResult } from "../protocol/node-link.ts";
import { SessionResult, TaskRequest } from "../protocol/rollout.ts";
import type { StreamedResult } from "../protocol/trainer-stream.ts";
import { ADMIN_TOKEN } from "./helpers/node-stack.ts";
import { startTarget, type RolloutTarget } from "./helpers/rollout-targets.ts";

const T = 120_000;

/** What the node stored for one of its rollouts (its own ids), read from its SQLite file. */
function nodeResult(dir: string, localRolloutId: string): SessionResult {
  const db = new Database(join(dir, "node.db"), { readonly: true });
  try {
    const row = db.query("select result from rollout_results where rollout_id = ?").get(localRolloutId) as { result: string } | null;
    return SessionResult.parse(JSON.parse(row!.result));
  } finally {
    db.close();
  }
}

describe("a node's result at the trainer", () => {
  let target: RolloutTarget;
  let trainer: TrainerClient;
  const results: StreamedResult[] = [];
  beforeAll(async () => {
    target = await startTarget("coordinator", { engine: { successProbability: 1 } });
    trainer = new TrainerClient({
      url: target.url,
      token: TOKENS.trainerToken,
      trainerId: "typed",
      reconnectDelayMs: 100,
      onResult: (r) => void results.push(r),
    });
    await trainer.ready();
  }, 60_000);
  afterAll(async () => {
    trainer?.close();
    await target?.stop();
  }, 60_000);

  test(
    "carries the node's traces, metadata, node id, error and timing unchanged; the coordinator stores the node's result under its own ids",
    async () => {
      const task = { task_id: "typed-path", instruction: "Say done.", evaluator: { strategy: "session_completed" } };
      const { rollout_ids } = await trainer.submit({ task, n: 2, agent: { harness: "mini" } });
      await waitFor(() => results.length === 2, "2 results at the trainer", 90_000);
      for (const streamed of results) {
        expect(rollout_ids).toContain(streamed.rollout_id);
        const stored = nodeResult(target.dir, localIds({ rollout_id: streamed.rollout_id, attempt: 1 }).rolloutId);
        expect(stored.status).toBe("COMPLETED");
        expect(stored.trajectory.traces.length).toBeGreaterThan(0);
        expect(streamed.status).toBe(stored.status);
        expect(streamed.traces).toEqual(stored.trajectory.traces);
        expect(streamed.reward).toBe(stored.trajectory.traces[0]!.reward);
        expect(streamed.metadata).toEqual(stored.metadata);
        expect([streamed.node_id, streamed.error]).toEqual([stored.node_id, stored.error]);
        expect(stored.timing).toMatchObject(streamed.timing);
        expect(Object.keys(streamed.timing).length).toBeGreaterThan(20);
        expect(streamed.policy_versions).toEqual([0]);

        // The coordinator's copy: the node's SessionResult with the coordinator's rollout and task ids.
        const res = await fetch(`${target.url}/v1/admin/rollouts/${streamed.rollout_id}`, { headers: { authorization: `Bearer ${TOKENS.adminToken}` } });
        const detail = RolloutDetail.parse(await res.json());
        expect(detail.state).toBe("COMPLETED");
        // One spelling on the way: the coordinator's states, then the node's, then the result's status.
        expect(detail.timeline.map((step) => step.state)).toEqual(["QUEUED", "ASSIGNED", "INIT", "READY", "RUN", "POSTRUN", "COMPLETED"]);
        const { polar_transcript: transcript, ...kept } = ReportedResult.parse(detail.result);
        expect(kept).toEqual({ ...stored, session_id: streamed.rollout_id, task_id: task.task_id });
        expect(transcript?.at(-1)).toMatchObject({ role: "assistant" });
      }
    },
    T,
  );
});

describe("an assignment naming what the node cannot run", () => {
  const dir = mkdtempSync(join(tmpdir(), "polar-refused-"));
  const frames: NodeToCoordinator[] = [];
  let coordinator: ReturnType<typeof Bun.serve> | undefined;
  afterAll(() => {
    coordinator?.stop(true);
    rmSync(dir, { recursive: true, force: true });
  });

  test(
    "fails that rollout on the node with an ERROR naming the unknown harness or builder; nothing runs as another",
    async () => {
      const assignment = (id: string, agent: object, builder?: object) =>
        CoordinatorToNode.parse({
          type: "assign",
          assignment: {
            rollout_id: id,
            attempt: 1,
            group_id: "grp",
            remaining_timeout_seconds: 60,
            request: TaskRequest.parse({ task_id: "refused", instruction: "x", agent, ...(builder && { builder }) }),
          },
        });
      // A coordinator that assigns what this node does not know (as a newer coordinator might).
      coordinator = Bun.serve({
        port: 0,
        fetch: (req, server) => (server.upgrade(req, { data: undefined }) ? undefined : new Response("no", { status: 400 })),
        websocket: {
          message(ws, text) {
            const frame = NodeToCoordinator.parse(JSON.parse(String(text)));
            frames.push(frame);
            if (frame.type === "hello") {
              ws.send(
                JSON.stringify({ type: "welcome", protocol_version: LINK_PROTOCOL_VERSION, node_id: frame.node_id, heartbeat_ms: 60_000, policy_version: 0 }),
              );
              ws.send(JSON.stringify(assignment("ro_harness", { harness: "copilot" })));
              ws.send(JSON.stringify(assignment("ro_builder", { harness: "mini" }, { strategy: "whole_session" })));
            }
            if (frame.type === "result") ws.send(JSON.stringify({ type: "result_ack", rollout_id: frame.rollout_id, attempt: frame.attempt }));
          },
        },
      });
      const engine = await startMockEngine({ port: 0 });
      const node = await startNode(
        parseNodeConfig({
          admin_token: ADMIN_TOKEN,
          open_rollout_api: true,
          port: 0,
          db: join(dir, "node.db"),
          node_id: "refusing",
          runtime: "process",
          engine: { urls: [engine.url] },
          coordinator: { url: `http://127.0.0.1:${coordinator.port}`, token: TOKENS.nodeToken },
        }),
      );
      try {
        const reported = () => frames.flatMap((f) => (f.type === "result" ? [f] : []));
        await waitFor(() => reported().length === 2, "both refusals reported", 30_000);
        const byId = new Map(reported().map((f) => [f.rollout_id, f.result]));
        const harness = byId.get("ro_harness")!;
        expect([harness.status, harness.session_id, harness.task_id]).toEqual(["ERROR", "ro_harness", "refused"]);
        expect(harness.error).toStartWith('assignment_refused: unknown harness "copilot"; expected one of ');
        expect(harness.trajectory).toMatchObject({
          status: "ERROR",
          traces: [],
          metadata: { training_filter: { masked: true, reason: "session_error" }, failure: { cause: "assignment_refused" } },
        });
        expect(byId.get("ro_builder")!.error).toStartWith('assignment_refused: unknown builder strategy "whole_session"; expected one of ');
        // Neither ever started a sandbox or a harness: the node's pipeline saw no rollout.
        expect(node.pipeline.liveRollouts()).toEqual([]);
        expect(frames.some((f) => f.type === "progress")).toBe(false);
      } finally {
        await node.stop();
        await engine.stop();
      }
    },
    T,
  );
});
