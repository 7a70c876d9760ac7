// The coordinator as a real process, killed with SIGKILL mid-run and started again on the same
// SQLite file: nodes (simulated, over real WebSockets) reconnect with what they hold and what
// they had not had acknowledged, the trainer client reconnects, and every rollout's result
// arrives — none lost, none delivered twice.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TrainerClient } from "../clients/typescript/trainer-client.ts";
import type { StreamedResult } from "../protocol/trainer-stream.ts";
import { AGENT, TASK, TOKENS, waitFor } from "./support/coordinator/cluster.ts";
import { PolarProcesses } from "./helpers/polar-processes.ts";
import { SimulatedNode } from "./support/coordinator/simulated-node.ts";

const dir = mkdtempSync(join(tmpdir(), "polar-coord-proc-"));
const db = join(dir, "coordinator.db");
const processes = new PolarProcesses();
afterAll(async () => {
  await processes.killAll();
  rmSync(dir, { recursive: true, force: true });
});

const startProcess = (port: number) => processes.coordinator({ db, port, graceMs: 3000 });

test("kill -9 of the coordinator mid-run loses no result and delivers none twice", async () => {
  const first = await startProcess(0);
  const port = Number(new URL(first.url).port);
  const nodes = ["a", "b"].map(
    (id) =>
      new SimulatedNode({ url: first.url, token: TOKENS.nodeToken, nodeId: id, heartbeatMs: 200, capacity: { init: 1, run: 2, postrun: 1 }, runMs: () => 400 }),
  );
  for (const node of nodes) await node.connect();
  const results: StreamedResult[] = [];
  const trainer = new TrainerClient({
    url: first.url,
    token: TOKENS.trainerToken,
    trainerId: "tr",
    reconnectDelayMs: 100,
    onResult: (r) => void results.push(r),
  });
  await trainer.ready();
  const { rollout_ids } = await trainer.submit({ task: TASK, n: 12, agent: AGENT });
  await waitFor(() => results.length >= 2, "a first result before the crash");
  first.child.kill("SIGKILL");
  await first.child.exited;

  const second = await startProcess(port);
  expect(second.url).toBe(first.url);
  for (const node of nodes) await node.connect();
  await waitFor(() => results.length === 12, "all 12 results after the restart", 60_000);
  expect(new Set(results.map((r) => r.rollout_id))).toEqual(new Set(rollout_ids));
  // Repeats on the wire are allowed (at-least-once); the client drops them by id.
  expect(results.length).toBe(12);
  trainer.close();
  for (const node of nodes) node.kill();
}, 120_000);
