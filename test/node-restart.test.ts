// `polar node` killed with SIGKILL mid-rollout and started again with the same config: its
// unfinished rollouts come back as masked ERROR results ("node restarted"), their sandboxes are
// removed, and the task completes with every sample accounted for.
import { afterAll, expect } from "bun:test";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultProcessRoot } from "../node/runtime/process/process.ts";
import { BUNDLED_TASKS_FILE } from "../node/api/task-catalog.ts";
import { startMockEngine } from "../node/mock-engine/index.ts";
import { ADMIN_TOKEN, pollTask, submit } from "./helpers/node-stack.ts";
import { testNeeding } from "./helpers/host-tools.ts";
import { ROLLOUT_TOKEN, rolloutFetch } from "./helpers/rollout-fetch.ts";

const POLAR = join(import.meta.dir, "..", "bin", "polar.ts");
// Slow engine: each LLM call takes seconds, so the rollouts are surely in RUN when killed.
const engine = await startMockEngine({ port: 0, tasks: BUNDLED_TASKS_FILE, ttftMs: 3_000 });
afterAll(() => engine.stop());

async function spawnNode(configPath: string): Promise<{ proc: Bun.Subprocess<"ignore", "ignore", "pipe">; url: string }> {
  const proc = Bun.spawn(["bun", POLAR, "node", "--config", configPath], { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const reader = proc.stderr.getReader();
  let text = "";
  const t0 = Date.now();
  while (Date.now() - t0 < 60_000) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
    const m = text.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
    if (m) {
      reader.releaseLock();
      void proc.stderr.pipeTo(new WritableStream());
      return { proc, url: m[1]! };
    }
  }
  throw new Error(`polar node did not start:\n${text}`);
}

// A Python task: the node checks at submit that its evaluation (pytest) can run here.
testNeeding("pytest")(
  "SIGKILL mid-run, restart: unfinished rollouts ERROR (node restarted), sandboxes removed",
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "polar-restart-e2e-"));
    const nodeId = `restart-${process.pid}-${Date.now()}`;
    const configPath = join(dir, "node.json");
    writeFileSync(
      configPath,
      JSON.stringify({
        node_id: nodeId,
        admin_token: ADMIN_TOKEN,
        rollout_token: ROLLOUT_TOKEN,
        port: 0,
        db: join(dir, "node.db"),
        engine: { urls: [engine.url] },
        workers: { run: 2 },
      }),
    );

    const first = await spawnNode(configPath);
    const taskId = "py-csv-trailing-empty-field";
    expect((await submit(first.url, { task_id: taskId, agent: { harness: "mini" }, num_samples: 3 })).status).toBe(200);
    const t0 = Date.now();
    for (;;) {
      const status = (await (await rolloutFetch(`${first.url}/rollout/status`)).json()) as { metrics: { run_inflight: number } };
      if (status.metrics.run_inflight === 2) break;
      if (Date.now() - t0 > 60_000) throw new Error("rollouts never reached RUN");
      await Bun.sleep(100);
    }
    const nodeDir = join(defaultProcessRoot(), nodeId);
    expect(readdirSync(nodeDir).length).toBeGreaterThanOrEqual(2);
    first.proc.kill("SIGKILL");
    await first.proc.exited;

    const second = await spawnNode(configPath);
    try {
      const done = await pollTask(second.url, taskId, 30_000);
      // Every session ended, whatever its status: Polar's word is `completed`.
      expect(done.status).toBe("completed");
      expect(done.results).toHaveLength(3);
      for (const r of done.results) {
        expect(r.status).toBe("ERROR");
        expect(r.error).toStartWith("node_restarted:");
        expect(r.trajectory.metadata.training_filter).toEqual({ masked: true, reason: "session_error" });
      }
      expect(readdirSync(nodeDir)).toEqual([]);
    } finally {
      second.proc.kill("SIGTERM");
      await second.proc.exited;
    }
  },
  180_000,
);
