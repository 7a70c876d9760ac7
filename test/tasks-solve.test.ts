// The bundled tasks solved (or not) by the real CLIs and Polar's mini agent in a Docker sandbox
// (and mini in the process runtime),
// against the mock engine's task-solving policy at success probability 1 and 0: the harness works
// through its own shell tool, the evaluator collects its patch, applies it with the hidden tests
// in a FRESH sandbox of the same image and gives reward 1 and 0 with per-test outcomes. Each
// harness does a Python task at one probability and a JavaScript task at the other (swapped
// between harnesses, so each task sees both rewards). Missing CLIs skip visibly, unless
// POLAR_REQUIRE_HARNESSES=1; no Docker engine skips visibly, unless POLAR_REQUIRE_DOCKER=1; no
// bwrap or host pytest skips the process suite visibly, unless POLAR_REQUIRE_BWRAP/PYTEST=1.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { EvaluationResult } from "../protocol/evaluation.ts";
import type { Task } from "../protocol/task.ts";
import { evaluate } from "../node/eval/evaluate.ts";
import { runtimeSource } from "../node/eval/sandbox-source.ts";
import { loadTaskFile } from "../lib/task-file.ts";
import type { SessionService } from "../node/gateway/session-service.ts";
import { getHarness, pinnedBinary, type HarnessKind, type PinnedCli } from "../node/harness/index.ts";
import { harnessMounts } from "../node/harness/sandbox-mounts.ts";
import { gatewaySocketFolder, runInSandbox } from "../node/harness/sandbox-runner.ts";
import { BOOKWORM, dockerForTests, testNodeId } from "./support/runtime/docker-test-env.ts";
import { createDockerRuntime } from "../node/runtime/docker/docker.ts";
import { createProcessRuntime } from "../node/runtime/process/process.ts";
import { prepareSandbox } from "../node/runtime/prepare.ts";
import { RuntimeSpec, type Sandbox, type SandboxRuntime } from "../node/runtime/types.ts";
import { missingTools } from "./helpers/host-tools.ts";
import { startStack, type Stack } from "./helpers/stack.ts";

const TASK_FILE = join(import.meta.dir, "..", "tasks", "tasks.jsonl");
const PYTHON_TASK = "py-paginate-last-page";
const JS_TASK = "js-get-path-falsy-values";
const MODEL = "Qwen/Qwen3-8B";
const RUN_TIMEOUT_MS = 300_000;
const REQUIRE_HARNESSES = process.env.POLAR_REQUIRE_HARNESSES === "1";

const HARNESSES: { kind: HarnessKind; cli: PinnedCli | null }[] = [
  { kind: "mini", cli: null },
  { kind: "pi", cli: "pi" },
  { kind: "qwen-code", cli: "qwen-code" },
  { kind: "codex", cli: "codex" },
  { kind: "claude-code", cli: "claude-code" },
];

interface Policy {
  stack: Stack;
  sessions: SessionService;
}

/** Registers the solve tests of `harnesses` with agent and evaluation sandboxes from `runtime`. */
function solveSuite(label: string, runtime: SandboxRuntime, harnesses: typeof HARNESSES): void {
  const nodeId = testNodeId(`tasks-solve-${label}`);
  const source = runtimeSource(runtime, nodeId);
  const policies = new Map<number, Policy>();
  const sandboxes: Sandbox[] = [];
  let tasks: Map<string, Task>;

  describe(`bundled tasks solved through each harness's own shell tool, evaluated in a fresh ${label} sandbox`, () => {
    beforeAll(async () => {
      tasks = new Map((await loadTaskFile(TASK_FILE)).tasks.map((t) => [t.task_id, t]));
      for (const successProbability of [1, 0]) {
        const stack = await startStack({ engine: { tasks: TASK_FILE, successProbability, model: MODEL, maxModelLen: 40960 } });
        policies.set(successProbability, { stack, sessions: stack.gateway.sessions });
      }
    }, 120_000);

    afterAll(async () => {
      await Promise.all(sandboxes.map((s) => s.destroy()));
      for (const { stack } of policies.values()) await stack.stop();
      await runtime.removeLeftovers(nodeId);
    });

    async function agentSandbox(task: Task): Promise<Sandbox> {
      const spec = RuntimeSpec.parse(task.runtime);
      const sandbox = await runtime.create({ spec, labels: { node_id: nodeId, rollout_id: `agent-${task.task_id}` }, mounts: harnessMounts() });
      sandboxes.push(sandbox);
      await prepareSandbox(sandbox, spec.prepare);
      return sandbox;
    }

    harnesses.forEach(({ kind, cli }, index) => {
      const runs =
        index % 2 === 0
          ? [
              [PYTHON_TASK, 1],
              [JS_TASK, 0],
            ]
          : [
              [JS_TASK, 1],
              [PYTHON_TASK, 0],
            ];
      for (const [taskId, successProbability] of runs as [string, number][]) {
        const name = `${kind}: ${taskId} at success probability ${successProbability} → reward ${successProbability}`;
        if (cli !== null && !existsSync(pinnedBinary(cli)) && !REQUIRE_HARNESSES) {
          test.skip(`${name} [SKIPPED: ${cli} not installed — run scripts/install-harnesses.sh]`, () => {});
          continue;
        }
        test(
          name,
          async () => {
            const task = tasks.get(taskId)!;
            const { stack, sessions } = policies.get(successProbability)!;
            const sandbox = await agentSandbox(task);
            const session = await sessions.open({ metadata: { harness: kind, task_id: taskId }, socketFolder: gatewaySocketFolder(sandbox) });
            try {
              const run = await runInSandbox({
                sandbox,
                adapter: getHarness(kind),
                session: { token: session.token, openaiBaseUrl: session.openaiBaseUrl, anthropicBaseUrl: session.anthropicBaseUrl },
                model: MODEL,
                instruction: task.instruction,
                limits: { timeoutMs: RUN_TIMEOUT_MS, maxTurns: 20 },
                options: { maxOutputTokens: 4096 },
              });
              if (run.exitCode !== 0) console.error(`${kind} stderr:\n${run.stderr.slice(-3000)}`);
              expect(run.exitCode).toBe(0);

              // The agent's steps as the engine sampled them: read, apply a patch, run the tests, finish.
              const calls = await stack.calls(session.id);
              expect(calls.length).toBe(4);
              const commands = calls.slice(0, 3).map((c) => c.response!.tool_calls[0]!.arguments);
              expect(commands[1]).toContain("git apply");
              for (const call of calls) expect(call.logprobs!.length).toBe(call.output_ids!.length);

              const result = await evaluate({
                task,
                agentSandbox: sandbox,
                harness: { exitCode: run.exitCode, timedOut: run.timedOut, finalOutput: run.finalOutput },
                source,
                rolloutId: `eval-${kind}-${taskId}`,
              });
              // What the pipeline stores: the wire shape, parsed back.
              const stored = EvaluationResult.parse(JSON.parse(JSON.stringify(result)));
              expect(stored.reward).toBe(successProbability);
              expect(stored.detail.status).toBe(successProbability === 1 ? "resolved" : "unresolved");
              expect(stored.detail.sandbox_id).not.toBeNull();
              expect(stored.detail.sandbox_id).not.toBe(sandbox.id);
              expect(stored.detail.patch_files.length).toBeGreaterThan(0);
              expect(stored.detail.patch_files.some((f) => f.startsWith("."))).toBe(false);
              const scored = stored.detail.tests.filter((t) => t.expected !== null);
              expect(scored.map((t) => t.name).sort()).toEqual([...task.FAIL_TO_PASS, ...task.PASS_TO_PASS].sort());
              expect(scored.every((t) => t.outcome === "passed")).toBe(successProbability === 1);
            } finally {
              await session.close();
            }
          },
          RUN_TIMEOUT_MS + 120_000,
        );
      }
    });
  });
}

const docker = await dockerForTests("bundled tasks solved by real harnesses in Docker", [BOOKWORM]);
if (docker) solveSuite("docker", createDockerRuntime({ docker }), HARNESSES);

// The process runtime (bwrap) with Polar's own agent: the same loop without a container engine;
// its Python task runs the host's pytest.
const processMissing = missingTools("bwrap", "pytest");
if (processMissing.length === 0)
  solveSuite(
    "process",
    createProcessRuntime({ warn: () => {} }),
    HARNESSES.filter((h) => h.kind === "mini"),
  );
else test.skip(`bundled tasks solved in the process runtime [SKIPPED: ${processMissing.join("; ")}]`, () => {});
