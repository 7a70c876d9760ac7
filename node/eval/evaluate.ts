// Why: evaluation is its own pipeline stage; this is its one entry point. It picks the task's
// evaluator (Polar's names accepted), collects the agent's change from the agent's sandbox where
// the evaluator needs it, and returns a reward (null = no reward) with a stored detail.
import { EVALUATOR_ALIASES, EvaluatorStrategy, type EvaluationResult } from "../../protocol/evaluation.ts";
import type { Task } from "../../protocol/task.ts";
import { PolarError } from "../../protocol/errors.ts";
import type { Sandbox } from "../runtime/types.ts";
import { collectPatch } from "./collect-patch.ts";
import { evaluateCommand } from "./command.ts";
import { evaluationDetail } from "./detail.ts";
import type { SandboxSource } from "./sandbox-source.ts";
import { baseCommit, evaluateSwePatch } from "./swe.ts";

export interface HarnessResult {
  /** Null when the harness was killed. */
  exitCode: number | null;
  timedOut: boolean;
  finalOutput: string;
}

export interface EvaluateInput {
  task: Task;
  /** The sandbox the agent worked in (its work tree is read, never evaluated in, for swe). */
  agentSandbox?: Sandbox;
  harness?: HarnessResult;
  /** Where fresh evaluation sandboxes come from: the node's SandboxPool, or runtimeSource(). */
  source?: SandboxSource;
  rolloutId: string;
  signal?: AbortSignal;
}

export function evaluatorStrategy(task: { task_id: string; evaluator?: { strategy: string } | null }): EvaluatorStrategy {
  const name = task.evaluator?.strategy ?? "none";
  const parsed = EvaluatorStrategy.safeParse(EVALUATOR_ALIASES[name] ?? name);
  if (!parsed.success) throw new PolarError("bad_request", `task ${task.task_id}: unknown evaluator strategy "${name}"`);
  return parsed.data;
}

function need<T>(value: T | undefined, what: string, task: Task): T {
  if (value === undefined) throw new PolarError("bad_request", `task ${task.task_id}: evaluation needs ${what}`);
  return value;
}

export async function evaluate(input: EvaluateInput): Promise<EvaluationResult> {
  const { task } = input;
  const strategy = evaluatorStrategy(task);
  switch (strategy) {
    case "none":
      return { reward: null, detail: evaluationDetail("none", { status: "no_reward", exit_code: input.harness?.exitCode ?? null }) };
    case "session_completed": {
      const harness = need(input.harness, "the harness result", task);
      const ok = harness.exitCode === 0 && !harness.timedOut;
      const reason = ok ? null : harness.timedOut ? "the harness ran over its timeout" : `the harness exited with ${harness.exitCode ?? "a signal"}`;
      return { reward: ok ? 1 : 0, detail: evaluationDetail("session_completed", { status: ok ? "passed" : "failed", reason, exit_code: harness.exitCode }) };
    }
    case "swe": {
      const agentSandbox = need(input.agentSandbox, "the agent's sandbox", task);
      const source = need(input.source, "a sandbox pool or runtime", task);
      const collected = await collectAgentPatch(agentSandbox, task, input.signal);
      if (collected instanceof PolarError) {
        return { reward: 0, detail: evaluationDetail("swe", { status: "patch_failed", reason: collected.message }) };
      }
      return evaluateSwePatch({ task, patch: collected, source, rolloutId: input.rolloutId, signal: input.signal });
    }
    case "command": {
      const usesFreshSandbox = (task.evaluator?.config as { sandbox?: unknown } | undefined)?.sandbox !== "agent";
      const hasRepo = input.agentSandbox !== undefined && usesFreshSandbox && (task.base_commit !== undefined || (task.runtime?.prepare.length ?? 0) > 0);
      const patch = hasRepo ? await collectAgentPatch(input.agentSandbox!, task, input.signal) : new Uint8Array();
      if (patch instanceof PolarError) return { reward: 0, detail: evaluationDetail("command", { status: "patch_failed", reason: patch.message }) };
      return evaluateCommand({
        task,
        finalOutput: input.harness?.finalOutput ?? "",
        patch,
        agentSandbox: input.agentSandbox,
        source: input.source,
        rolloutId: input.rolloutId,
        signal: input.signal,
      });
    }
  }
}

/** The agent's patch, or the too-large error as an agent outcome (other failures throw). */
async function collectAgentPatch(sandbox: Sandbox, task: Task, signal?: AbortSignal): Promise<Uint8Array | PolarError> {
  try {
    return (await collectPatch(sandbox, baseCommit(task), signal)).bytes;
  } catch (err) {
    if (err instanceof PolarError && err.code === "too_large") return err;
    throw err;
  }
}
