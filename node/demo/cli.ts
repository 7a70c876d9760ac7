// Why: `polar demo` — the embedded default: a node (process runtime with bwrap, or Docker with
// --runtime docker) against the mock engine's task-solving policy and the bundled tasks (or any
// task file with gold patches, `--tasks tasks/exercism-python/tasks.jsonl`), driven
// through Polar's rollout API exactly as a trainer would; live progress per stage, then a table
// and a JSONL of the results. No GPU, no network, no config.
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { TaskStatus, type SessionResult } from "../../protocol/rollout.ts";
import { BUNDLED_TASKS_FILE } from "../api/task-catalog.ts";
import { type FlagSpecs, UsageError, intFlag, oneOf, parseFlags, stringFlag } from "../../lib/cli-args.ts";
import { pinnedBinary, type PinnedCli } from "../harness/common.ts";
import { HARNESS_KINDS, type HarnessKind } from "../harness/registry.ts";
import { startMockEngine } from "../mock-engine/index.ts";
import { startNode } from "../main.ts";
import { describeRolloutAccess } from "../../lib/rollout-api/access.ts";
import { parseNodeConfig } from "../node-config.ts";
import type { StageMetrics } from "../pipeline/pipeline.ts";
import { DEFAULT_RUNTIME, openRuntime, RUNTIME_BACKENDS, runtimeHelp } from "../runtime/registry.ts";
import { runClusterDemo } from "./cluster.ts";
import { printSummary } from "./summary.ts";

const DEMO_HARNESSES = HARNESS_KINDS.filter((k) => k !== "command");
const FLAGS: FlagSpecs = {
  harness: { type: "string", help: `harness: ${DEMO_HARNESSES.join(", ")} (the CLIs need scripts/install-harnesses.sh)`, default: "mini" },
  runtime: { type: "string", help: `sandbox runtime: ${runtimeHelp()}; docker needs the image polar-bookworm:dev`, default: DEFAULT_RUNTIME },
  tasks: {
    type: "string",
    help: "task file (JSONL) the node serves and the mock engine's policy solves, e.g. tasks/exercism-python/tasks.jsonl",
    default: "tasks/tasks.jsonl",
  },
  count: { type: "string", help: "how many of its tasks to submit", default: "3" },
  samples: { type: "string", help: "samples per task", default: "4" },
  out: { type: "string", help: "folder for the node's database and results.jsonl (default: a new temp folder)" },
  cluster: {
    type: "boolean",
    help: "a coordinator, two nodes and a trainer submitting GRPO groups, as real processes; prints the dashboard URL and the admin token",
  },
  groups: { type: "string", help: "--cluster: GRPO groups the trainer submits", default: "3" },
  port: { type: "string", help: "--cluster: the coordinator's port (0 = any free port)", default: "0" },
  keep: { type: "boolean", help: "--cluster: keep everything running after the summary (for the dashboard) until Ctrl-C" },
};
const ADMIN_TOKEN = "demo-admin-token-not-secret";
/** Harnesses ask for up to 32000 output tokens; the mock engine's context is 40960. */
const MAX_TOKENS_CAP = 4096;
const CLI_OF: Partial<Record<HarnessKind, PinnedCli>> = { codex: "codex", "claude-code": "claude-code", "qwen-code": "qwen-code", pi: "pi" };

export async function runDemoCli(argv: string[]): Promise<void> {
  const flags = parseFlags(
    "demo",
    "a node with sandboxes, the mock engine's solving policy and the bundled (or --tasks) tasks, driven through the rollout API",
    FLAGS,
    argv,
  );
  if (!flags) return;
  const harness = stringFlag(flags, "harness") ?? "mini";
  if (!(DEMO_HARNESSES as readonly string[]).includes(harness)) throw new UsageError(`--harness must be one of ${DEMO_HARNESSES.join(", ")}`);
  const cli = CLI_OF[harness as HarnessKind];
  if (cli && !existsSync(pinnedBinary(cli)))
    throw new UsageError(`the ${harness} CLI is not installed (${pinnedBinary(cli)}); run scripts/install-harnesses.sh`);
  const taskFile = resolve(stringFlag(flags, "tasks") ?? BUNDLED_TASKS_FILE);
  if (!existsSync(taskFile)) throw new UsageError(`--tasks: ${taskFile}: no such file`);
  const taskCount = intFlag(flags, "count") ?? 3;
  const runtimeName = oneOf(flags, "runtime", RUNTIME_BACKENDS) ?? DEFAULT_RUNTIME;
  const samples = intFlag(flags, "samples") ?? 4;
  const dir = stringFlag(flags, "out") ?? mkdtempSync(join(tmpdir(), "polar-demo-"));
  if (flags.cluster === true) {
    if (runtimeName !== "process") throw new UsageError("--cluster runs its nodes on the process runtime");
    return runClusterDemo({
      harness,
      taskFile,
      groups: intFlag(flags, "groups") ?? 3,
      samples,
      dir,
      port: intFlag(flags, "port") ?? 0,
      keep: flags.keep === true,
    });
  }
  if (flags.keep === true) throw new UsageError("--keep goes with --cluster");
  const runtime = await openRuntime(runtimeName, { images: ["polar-bookworm:dev"] });

  const engine = await startMockEngine({ port: 0, tasks: taskFile, successProbability: 0.5 });
  const node = await startNode(
    parseNodeConfig({
      node_id: `demo-${process.pid}`,
      admin_token: ADMIN_TOKEN,
      // A short-lived node on loopback that this process alone drives.
      open_rollout_api: true,
      port: 0,
      db: join(dir, "node.db"),
      runtime: runtimeName,
      tasks: taskFile,
      engine: { urls: [engine.url] },
      sampling: { max_tokens_cap: MAX_TOKENS_CAP },
      workers: { init: 4, run: 4, postrun: 2, ready_backlog: 2 },
    }),
    { runtime },
  );
  try {
    log(
      `node ${node.url} (runtime ${runtimeName}; ${describeRolloutAccess(node.rolloutAccess)}) · mock engine ${engine.url} (task-solving policy, success 0.5) · harness ${harness} · tasks ${taskFile}`,
    );
    const picked = await pickTasks(node.url, taskCount);
    const t0 = performance.now();
    const taskIds: string[] = [];
    for (const taskId of picked) {
      const res = await fetch(`${node.url}/rollout/task/submit`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ task_id: taskId, agent: { harness }, num_samples: samples, metadata: { group_id: taskId } }),
      });
      const body = (await res.json().catch(() => ({}))) as { detail?: unknown };
      // The node refuses a task it cannot evaluate here (a missing pytest or node), naming what is missing.
      if (res.status === 422 && typeof body.detail === "string") {
        log(`skipped: ${body.detail}`);
        continue;
      }
      if (!res.ok) throw new Error(`submit ${taskId}: HTTP ${res.status} ${JSON.stringify(body)}`);
      taskIds.push(taskId);
    }
    if (taskIds.length === 0) {
      log("no bundled task can be evaluated on this machine (see above); nothing was run");
      process.exitCode = 1;
      return;
    }
    log(`submitted ${taskIds.length} task(s) × ${samples} samples through POST /rollout/task/submit`);
    const statuses = await follow(node.url, taskIds);
    const results = statuses.flatMap((s) => s.results);
    const jsonl = join(dir, "results.jsonl");
    writeFileSync(jsonl, results.map((r) => JSON.stringify(r)).join("\n") + "\n");
    printSummary(statuses);
    log(`${results.length} results in ${((performance.now() - t0) / 1000).toFixed(1)} s → ${jsonl}`);
    const failed = results.filter((r) => r.status !== "COMPLETED");
    if (failed.length > 0) {
      const causes = [...new Set(failed.map((r) => r.error))];
      log(`${failed.length} rollout(s) did not complete: ${causes.join("; ")}`);
      process.exitCode = 1;
    } else if (taskIds.length < picked.length) process.exitCode = 1;
  } finally {
    await node.stop();
    await engine.stop();
  }
}

/** The first `count` tasks of the node's task list, alternating between id prefixes (`py-`, `js-`) when there are several. */
async function pickTasks(url: string, count: number): Promise<string[]> {
  const { tasks } = (await (await fetch(`${url}/tasks`)).json()) as { tasks: { task_id: string }[] };
  const groups = new Map<string, string[]>();
  for (const { task_id } of tasks) {
    const prefix = task_id.split("-")[0]!;
    groups.set(prefix, [...(groups.get(prefix) ?? []), task_id]);
  }
  const lists = [...groups.values()];
  const mixed: string[] = [];
  for (let i = 0; mixed.length < Math.min(count, tasks.length); i++) {
    for (const list of lists) if (list[i] && mixed.length < count) mixed.push(list[i]!);
  }
  return mixed;
}

/** Polls the node until every task has ended, printing the stage counts whenever they change. */
async function follow(url: string, taskIds: string[]): Promise<TaskStatus[]> {
  let last = "";
  for (;;) {
    const { metrics } = (await (await fetch(`${url}/rollout/status`)).json()) as { metrics: StageMetrics };
    const statuses = await Promise.all(taskIds.map(async (id) => TaskStatus.parse(await (await fetch(`${url}/rollout/task/${id}`)).json())));
    const results: SessionResult[] = statuses.flatMap((s) => s.results);
    const rewards = results.map((r) => String(r.metadata.reward ?? "-")).join(" ");
    const line = `queued ${metrics.init_queue_depth} · init ${metrics.init_inflight} · ready ${metrics.ready_depth} · run ${metrics.run_inflight} · postrun ${metrics.postrun_queue_depth + metrics.postrun_inflight} · done ${results.length}/${statuses.reduce((n, s) => n + s.total_sessions, 0)} · rewards ${rewards || "-"}`;
    if (line !== last) log(line);
    last = line;
    if (statuses.every((s) => s.status !== "running" && s.status !== "cancelling")) return statuses;
    await Bun.sleep(300);
  }
}

function log(line: string): void {
  console.log(`polar demo: ${line}`);
}
