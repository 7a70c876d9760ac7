// A real `polar node` joined to a real `polar coordinator` is killed with SIGKILL (or stopped with
// SIGTERM) while its rollouts run and started again on the same store within the coordinator's
// grace period (what a supervisor restarting a crashed node does): the node reports its cut-off
// assignments as interrupted, the coordinator queues them again with the attempt counted, and
// every rollout completes — none is delivered to the trainer as an ERROR while attempts remain.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TrainerClient } from "../clients/typescript/trainer-client.ts";
import type { StreamedResult } from "../protocol/trainer-stream.ts";
import { TOKENS, waitFor } from "./support/coordinator/cluster.ts";
import { PolarProcesses, type Child } from "./helpers/polar-processes.ts";
import { startMockEngine } from "../node/mock-engine/index.ts";

const ROOT = join(import.meta.dir, "..");
const TASKS = join(ROOT, "tasks/tasks.jsonl");
const dir = mkdtempSync(join(tmpdir(), "polar-node-restart-cluster-"));
const processes = new PolarProcesses();
// First life: every LLM call hangs far longer than the test waits, so the rollouts are surely
// running when the node dies. Second life: the task-solving engine answers at once.
const hanging = await startMockEngine({ port: 0, tasks: TASKS, ttftMs: 600_000 });
const solving = await startMockEngine({ port: 0, tasks: TASKS, successProbability: 1, seed: 3 });
afterAll(async () => {
  await processes.killAll();
  await hanging.stop();
  await solving.stop();
  rmSync(dir, { recursive: true, force: true });
});

function startNode(nodeId: string, coordinatorUrl: string, engineUrl: string): Child {
  return processes.clusterNode({ id: nodeId, db: join(dir, `${nodeId}.db`), engineUrl, coordinatorUrl });
}

/** Every JSON line the coordinator writes to stderr (its structured log), parsed. */
function collectLog(child: Child, into: Record<string, unknown>[]): void {
  void (async () => {
    let rest = "";
    for await (const chunk of child.stderr as ReadableStream<Uint8Array>) {
      rest += new TextDecoder().decode(chunk);
      const lines = rest.split("\n");
      rest = lines.pop()!;
      for (const line of lines) if (line.startsWith("{")) into.push(JSON.parse(line) as Record<string, unknown>);
    }
  })();
}

const admin = (url: string, path: string) =>
  fetch(`${url}${path}`, { headers: { authorization: `Bearer ${TOKENS.adminToken}` } }).then((r) => r.json() as Promise<any>);
const instruction = (id: string) =>
  readFileSync(TASKS, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { task_id?: string; instruction?: string })
    .find((t) => t.task_id === id)!.instruction!;

/** Runs a group of 3 on one node, stops the node with `signal` while 2 run, starts it again on its store. */
async function restartMidRun(nodeId: string, signal: "SIGKILL" | "SIGTERM", cause: string): Promise<void> {
  const { url, child } = await processes.coordinator({ db: join(dir, `${nodeId}-coordinator.db`), graceMs: 120_000, stderr: "pipe" });
  const log: Record<string, unknown>[] = [];
  collectLog(child, log);
  const first = startNode(nodeId, url, hanging.url);
  await waitFor(
    async () => (await admin(url, "/v1/admin/nodes")).nodes.some((n: { status: string }) => n.status === "connected"),
    "the node connected",
    60_000,
  );

  const results: StreamedResult[] = [];
  const trainer = new TrainerClient({ url, token: TOKENS.trainerToken, trainerId: nodeId, reconnectDelayMs: 100, onResult: (r) => void results.push(r) });
  await trainer.ready();
  const taskId = "js-leap-year-century";
  const { rollout_ids } = await trainer.submit({ task: { task_id: taskId, instruction: instruction(taskId) }, n: 3, agent: { harness: "mini" } });
  await waitFor(
    async () => (await admin(url, "/v1/admin/rollouts?state=ASSIGNED")).rollouts.filter((r: { stage: string | null }) => r.stage === "RUN").length === 2,
    "two rollouts running",
    120_000,
  );
  first.kill(signal);
  await first.exited;

  startNode(nodeId, url, solving.url);
  await waitFor(() => results.length === 3, "3 results after the restart", 300_000);
  expect(new Set(results.map((r) => r.rollout_id))).toEqual(new Set(rollout_ids));
  expect(results.map((r) => r.status)).toEqual(["COMPLETED", "COMPLETED", "COMPLETED"]);
  expect(trainer.counts.duplicates).toBe(0);

  const stats = await admin(url, "/v1/admin/stats");
  expect(stats.nodes_lost).toBe(0);
  expect(stats.requeued).toBe(3);
  const done = (await admin(url, "/v1/admin/rollouts?state=COMPLETED")).rollouts as { rollout_id: string; attempt: number; node_id: string }[];
  expect(done.map((r) => [r.attempt, r.node_id])).toEqual([
    [2, nodeId],
    [2, nodeId],
    [2, nodeId],
  ]);
  const requeued = log.filter((l) => l.event === "rollouts.requeued");
  expect(requeued.map((l) => [l.cause, l.rollouts])).toEqual([[`node ${nodeId} restarted (${cause})`, 3]]);
  expect(log.filter((l) => l.event === "node.reconnected")).toEqual([expect.objectContaining({ node_id: nodeId, kept: 0, released: 3 })]);
  trainer.close();
}

test("a node killed -9 and restarted within the grace: its rollouts are queued again and completed, none delivered as ERROR", async () => {
  await restartMidRun("node-killed", "SIGKILL", "node_restarted");
}, 600_000);

test("a node stopped with SIGTERM and started again: the rollouts its shutdown cut off are queued again and completed", async () => {
  await restartMidRun("node-stopped", "SIGTERM", "shutdown");
}, 600_000);
