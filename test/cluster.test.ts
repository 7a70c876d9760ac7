// A cluster of real processes on port 0 — `polar coordinator`, two `polar node --coordinator`
// (process runtime, the task-solving mock engine) — and the TypeScript trainer client: groups of
// a bundled task run end to end with rewards of both kinds; one node is killed with SIGKILL
// mid-rollout and its rollouts finish on the other, each delivered to the trainer exactly once.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TrainerClient } from "../clients/typescript/trainer-client.ts";
import type { StreamedResult } from "../protocol/trainer-stream.ts";
import { TOKENS, waitFor } from "./support/coordinator/cluster.ts";
import { PolarProcesses, type Child } from "./helpers/polar-processes.ts";
import { startMockEngine } from "../node/mock-engine/index.ts";
import { BOOKWORM, dockerForTests, expectNoContainers } from "./support/runtime/docker-test-env.ts";
import { testNeeding } from "./helpers/host-tools.ts";

const ROOT = join(import.meta.dir, "..");
const dir = mkdtempSync(join(tmpdir(), "polar-cluster-"));
const processes = new PolarProcesses();
const engine = await startMockEngine({ port: 0, tasks: join(ROOT, "tasks/tasks.jsonl"), successProbability: 0.5, seed: 7 });
afterAll(async () => {
  await processes.killAll();
  await engine.stop();
  rmSync(dir, { recursive: true, force: true });
});

function startNode(id: string, coordinatorUrl: string, runtime: "process" | "docker" = "process"): Child {
  return processes.clusterNode({ id, db: join(dir, `${id}.db`), engineUrl: engine.url, coordinatorUrl, runtime });
}

const TASK_ROWS = new Map(
  readFileSync(join(ROOT, "tasks/tasks.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { task_id?: string; instance_id?: string; instruction?: string; problem_statement?: string })
    .map((row) => [row.task_id ?? row.instance_id!, row.instruction ?? row.problem_statement!]),
);
const bundled = (id: string) => ({ task_id: id, instruction: TASK_ROWS.get(id)! });

async function startCoordinator(name: string): Promise<string> {
  return (await coordinatorProcess(name)).url;
}

const coordinatorProcess = (name: string, port = 0, graceMs = 1500) => processes.coordinator({ db: join(dir, `${name}.db`), port, graceMs });

const admin = (url: string, path: string) =>
  fetch(`${url}${path}`, { headers: { authorization: `Bearer ${TOKENS.adminToken}` } }).then((r) => r.json() as Promise<any>);

// A Python task among them: its evaluation runs the host's pytest in process sandboxes.
testNeeding("pytest")(
  "coordinator + 2 nodes + trainer: groups end to end; a node killed mid-rollout → its rollouts finish on the other, each delivered once",
  async () => {
    const url = await startCoordinator("coordinator");
    const victim = startNode("node-a", url);
    startNode("node-b", url);
    await waitFor(
      async () => (await admin(url, "/v1/admin/nodes")).nodes.filter((n: { status: string }) => n.status === "connected").length === 2,
      "2 nodes connected",
      60_000,
    );

    const results: StreamedResult[] = [];
    const groups: { group_id: string; advantages: (number | null)[] }[] = [];
    const trainer = new TrainerClient({
      url,
      token: TOKENS.trainerToken,
      trainerId: "e2e",
      reconnectDelayMs: 100,
      onResult: (r) => void results.push(r),
      onGroup: (g) => void groups.push(g),
    });
    await trainer.ready();
    // The trainer names a bundled task and its problem statement; each node fills in the task's
    // runtime (repository upload) and evaluator from its own task file.
    const a = await trainer.submit({ task: bundled("py-csv-trailing-empty-field"), n: 4, agent: { harness: "mini" } });
    const b = await trainer.submit({ task: bundled("js-leap-year-century"), n: 4, agent: { harness: "mini" } });

    // Kill node-a as soon as it runs something.
    await waitFor(
      async () =>
        (await admin(url, "/v1/admin/rollouts?state=ASSIGNED")).rollouts.some(
          (r: { node_id: string; stage: string | null }) => r.node_id === "node-a" && r.stage === "RUN",
        ),
      "node-a running a rollout",
      120_000,
    );
    victim.kill("SIGKILL");
    await waitFor(() => results.length === 8, "8 results", 300_000);

    const ids = [...a.rollout_ids, ...b.rollout_ids];
    expect(new Set(results.map((r) => r.rollout_id))).toEqual(new Set(ids));
    expect(results.length).toBe(8);
    expect(trainer.counts.duplicates).toBe(0);
    const stats = await admin(url, "/v1/admin/stats");
    expect(stats.requeued).toBeGreaterThan(0);
    expect(stats.nodes_lost).toBe(1);
    for (const r of results) {
      expect(r.status).toBe("COMPLETED");
      expect(r.traces.length).toBeGreaterThan(0);
      expect([0, 1]).toContain(r.reward!);
    }
    // The solving policy at 0.5: both rewards appear over 8 rollouts with this seed.
    expect(new Set(results.map((r) => r.reward))).toEqual(new Set([0, 1]));
    await waitFor(() => groups.length === 2, "both group messages");
    trainer.close();
  },
  600_000,
);

test("kill -9 of the coordinator mid-run: real nodes and the trainer reconnect to its restart, no result lost or repeated", async () => {
  const first = await coordinatorProcess("coordinator-crash", 0, 30_000);
  const port = Number(new URL(first.url).port);
  startNode("node-c", first.url);
  startNode("node-d", first.url);
  await waitFor(
    async () => (await admin(first.url, "/v1/admin/nodes")).nodes.filter((n: { status: string }) => n.status === "connected").length === 2,
    "2 nodes connected",
    60_000,
  );
  const results: StreamedResult[] = [];
  const trainer = new TrainerClient({
    url: first.url,
    token: TOKENS.trainerToken,
    trainerId: "e2e-crash",
    reconnectDelayMs: 200,
    onResult: (r) => void results.push(r),
  });
  await trainer.ready();
  const { rollout_ids } = await trainer.submit({ task: bundled("js-leap-year-century"), n: 6, agent: { harness: "mini" } });
  await waitFor(() => results.length >= 1, "a first result before the crash", 300_000);
  first.child.kill("SIGKILL");
  await first.child.exited;
  // Same file, same port: the nodes' links and the trainer client find it again by themselves.
  await coordinatorProcess("coordinator-crash", port, 30_000);
  await waitFor(() => results.length === 6, "all 6 results after the restart", 300_000);
  expect(new Set(results.map((r) => r.rollout_id))).toEqual(new Set(rollout_ids));
  expect(results.length).toBe(6);
  expect(results.every((r) => r.status === "COMPLETED")).toBe(true);
  trainer.close();
}, 600_000);

const docker = await dockerForTests("cluster on Docker", [BOOKWORM]);
if (docker) {
  test("a node on the Docker runtime runs a coordinator's group in containers and leaves none behind", async () => {
    const url = await startCoordinator("coordinator-docker");
    const node = startNode("node-docker", url, "docker");
    await waitFor(
      async () =>
        (await admin(url, "/v1/admin/nodes")).nodes.some((n: { node_id: string; status: string }) => n.node_id === "node-docker" && n.status === "connected"),
      "the Docker node connected",
      60_000,
    );
    const results: StreamedResult[] = [];
    const trainer = new TrainerClient({ url, token: TOKENS.trainerToken, trainerId: "e2e-docker", onResult: (r) => void results.push(r) });
    await trainer.ready();
    const { rollout_ids } = await trainer.submit({ task: bundled("js-leap-year-century"), n: 2, agent: { harness: "mini" } });
    await waitFor(() => results.length === 2, "2 results from containers", 300_000);
    expect(new Set(results.map((r) => r.rollout_id))).toEqual(new Set(rollout_ids));
    for (const r of results) {
      expect(r.status).toBe("COMPLETED");
      expect(r.node_id).toBe("node-docker");
      expect([0, 1]).toContain(r.reward!);
    }
    trainer.close();
    node.kill("SIGTERM");
    await node.exited;
    await expectNoContainers(docker, "node-docker");
  }, 600_000);
}
