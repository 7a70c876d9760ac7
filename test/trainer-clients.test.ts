// Both trainer clients against one live cluster of real processes — `polar coordinator` (with the
// bundled task file) and two `polar node` (process runtime, the task-solving mock engine) — run
// the shared conformance cases (clients/conformance/cases.json), the coordinator SIGKILLed and
// restarted mid-stream among them; then the Python client's whole unittest suite runs against
// the same cluster. Without a Python that has websockets the Python part is skipped, naming what
// is missing (POLAR_REQUIRE_PYTHON=1 makes it fail instead).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadCases, runCase, type LiveCluster } from "../clients/conformance/typescript-runner.ts";
import { TOKENS, waitFor } from "./support/coordinator/cluster.ts";
import { startMockEngine } from "../node/mock-engine/index.ts";
import { PolarProcesses, type Child } from "./helpers/polar-processes.ts";
import { findPython } from "../scripts/find-python.ts";

const ROOT = join(import.meta.dir, "..");
const TASKS = join(ROOT, "tasks/tasks.jsonl");
const dir = mkdtempSync(join(tmpdir(), "polar-clients-"));
const processes = new PolarProcesses();
const engine = await startMockEngine({ port: 0, tasks: TASKS, successProbability: 0.5, seed: 5 });
let coordinator: { url: string; child: Child };
const nodes: Child[] = [];
let control: ReturnType<typeof Bun.serve>;

const admin = (path: string) =>
  fetch(`${coordinator.url}${path}`, { headers: { authorization: `Bearer ${TOKENS.adminToken}` } }).then((r) => r.json() as Promise<any>);
const bothNodesConnected = async () => (await admin("/v1/admin/nodes")).nodes.filter((n: { status: string }) => n.status === "connected").length === 2;

function startCoordinator(port = 0) {
  return processes.coordinator({ db: join(dir, "coordinator.db"), port, graceMs: 30_000, extra: ["--tasks", TASKS] });
}

async function restartCoordinator(): Promise<void> {
  const port = Number(new URL(coordinator.url).port);
  coordinator.child.kill("SIGKILL");
  await coordinator.child.exited;
  coordinator = await startCoordinator(port);
  await waitFor(bothNodesConnected, "both nodes back after the restart", 180_000);
}

beforeAll(async () => {
  coordinator = await startCoordinator();
  // Node ids unique to this run: a node removes what an earlier life of its id left on the host.
  for (const id of [`clients-${process.pid}-a`, `clients-${process.pid}-b`]) {
    const node = processes.clusterNode({ id, db: join(dir, `${id}.db`), engineUrl: engine.url, coordinatorUrl: coordinator.url, stderr: "inherit" });
    nodes.push(node);
  }
  await waitFor(bothNodesConnected, "2 nodes connected", 180_000);
  // The Python suite asks for restarts over HTTP; one at a time.
  let chain = Promise.resolve();
  control = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (req) => {
      if (req.method !== "POST" || new URL(req.url).pathname !== "/restart_coordinator") return new Response("not found", { status: 404 });
      const done = chain.then(restartCoordinator);
      chain = done.catch(() => {});
      await done;
      return Response.json({ url: coordinator.url });
    },
  });
}, 300_000);

afterAll(async () => {
  control?.stop(true);
  // SIGTERM first: a node then removes its sandboxes (its id is not reused by a later run).
  for (const node of nodes) node.kill("SIGTERM");
  await Promise.race([Promise.all(nodes.map((n) => n.exited)), Bun.sleep(15_000)]);
  await processes.killAll();
  await engine.stop();
  rmSync(dir, { recursive: true, force: true });
});

const instructions = new Map(
  readFileSync(TASKS, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { task_id: string; instruction: string })
    .map((row) => [row.task_id, row.instruction]),
);
const cluster: LiveCluster = {
  get coordinatorUrl() {
    return coordinator.url;
  },
  trainerToken: TOKENS.trainerToken,
  instructions,
  restartCoordinator,
};

for (const c of loadCases()) {
  test(`TypeScript client: ${c.name}`, () => runCase(c, cluster, `ts-${c.name}`), 600_000);
}

const python = findPython();
if ("python" in python) {
  test("Python client: its unittest suite, the conformance cases included, against the same cluster", async () => {
    const report = join(dir, "python-report.json");
    const child = Bun.spawn([python.python, join(ROOT, "clients/python/tests/run_suite.py"), "--report", report], {
      stdout: "inherit",
      stderr: "inherit",
      env: {
        ...process.env,
        POLAR_TEST_COORDINATOR_URL: coordinator.url,
        POLAR_TEST_TRAINER_TOKEN: TOKENS.trainerToken,
        POLAR_TEST_CONTROL_URL: `http://127.0.0.1:${control.port}`,
        POLAR_TEST_TASKS: TASKS,
      },
    });
    const exitCode = await child.exited;
    const summary = JSON.parse(readFileSync(report, "utf8")) as { tests_run: number; failures: number; errors: number; skipped: number; failed: string[] };
    expect(summary.failed).toEqual([]);
    expect({ failures: summary.failures, errors: summary.errors, skipped: summary.skipped }).toEqual({ failures: 0, errors: 0, skipped: 0 });
    expect(summary.tests_run).toBeGreaterThanOrEqual(loadCases().length + 20);
    expect(exitCode).toBe(0);
  }, 1_200_000);
} else if (process.env.POLAR_REQUIRE_PYTHON === "1") {
  test("Python client [POLAR_REQUIRE_PYTHON=1]", () => {
    throw new Error(`POLAR_REQUIRE_PYTHON=1 but ${python.missing}`);
  });
} else {
  test.skip(`Python client [SKIPPED: needs ${python.missing}]`, () => {});
}
