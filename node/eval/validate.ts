// Why: SWE-bench's validation of a task set — the gold patch must resolve each task (reward 1)
// and the unmodified repository must not (reward 0) — run through the real evaluator in real
// sandboxes, so a task that cannot score rollouts is caught before any rollout runs. A task whose
// evaluation needs something this host's sandboxes lack (pytest, node) is reported as such first.
import type { EvaluationResult } from "../../protocol/evaluation.ts";
import type { Task } from "../../protocol/task.ts";
import { asPolarError } from "../../protocol/errors.ts";
import type { RequirementCheck } from "./requirements.ts";
import type { SandboxSource } from "./sandbox-source.ts";
import { evaluateSwePatch } from "./swe.ts";

export interface TaskValidation {
  task_id: string;
  gold_reward: number | null;
  empty_reward: number | null;
  ok: boolean;
  /** False when this host cannot evaluate the task at all (a requirement is missing); nothing was run. */
  evaluable: boolean;
  /** Why the task failed validation (a missing requirement, a wrong reward's evaluation status, or an error). */
  problem: string | null;
  duration_ms: number;
  gold?: EvaluationResult;
  empty?: EvaluationResult;
}

export interface ValidateOptions {
  source: SandboxSource;
  /** Checks each task's evaluation requirements before its gold and empty runs. */
  requirements?: RequirementCheck;
  /** Tasks validated at once; default 2. */
  concurrency?: number;
  onResult?: (result: TaskValidation) => void;
  signal?: AbortSignal;
}

function describe(which: string, result: EvaluationResult, wanted: number): string {
  const d = result.detail;
  const counts =
    d.fail_to_pass && d.pass_to_pass
      ? ` (FAIL_TO_PASS ${d.fail_to_pass.passed}/${d.fail_to_pass.total}, PASS_TO_PASS ${d.pass_to_pass.passed}/${d.pass_to_pass.total})`
      : "";
  const status = d.status === "invalid" ? `invalid evaluation (${d.evaluation_error})` : d.status;
  return `${which} gave ${result.reward ?? "no reward"} not ${wanted}: ${status}${d.reason ? ` — ${d.reason}` : ""}${counts}`;
}

async function validateOne(task: Task, options: ValidateOptions): Promise<TaskValidation> {
  const started = performance.now();
  const run = (patch: string, which: string) =>
    evaluateSwePatch({ task, patch, source: options.source, rolloutId: `validate-${task.task_id}-${which}`, signal: options.signal });
  try {
    const unevaluable = await options.requirements?.check(task, options.signal);
    if (unevaluable) {
      return {
        task_id: task.task_id,
        gold_reward: null,
        empty_reward: null,
        ok: false,
        evaluable: false,
        problem: unevaluable.message,
        duration_ms: Math.round(performance.now() - started),
      };
    }
    const [gold, empty] = [await run(task.patch ?? "", "gold"), await run("", "empty")];
    const problems = [
      ...(gold.reward === 1 ? [] : [describe("gold patch", gold, 1)]),
      ...(empty.reward === 0 ? [] : [describe("unmodified repository", empty, 0)]),
    ];
    if (task.patch === undefined || task.patch === "") problems.unshift("the task has no gold patch");
    return {
      task_id: task.task_id,
      gold_reward: gold.reward,
      empty_reward: empty.reward,
      ok: problems.length === 0,
      evaluable: true,
      problem: problems.length ? problems.join("; ") : null,
      duration_ms: Math.round(performance.now() - started),
      gold,
      empty,
    };
  } catch (err) {
    const error = asPolarError(err);
    return {
      task_id: task.task_id,
      gold_reward: null,
      empty_reward: null,
      ok: false,
      evaluable: true,
      problem: `${error.code}: ${error.message}`,
      duration_ms: Math.round(performance.now() - started),
    };
  }
}

/** Validates every task (results in task order). */
export async function validateTasks(tasks: Task[], options: ValidateOptions): Promise<TaskValidation[]> {
  const results: TaskValidation[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await validateOne(tasks[index]!, options);
      options.onResult?.(results[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 2, tasks.length)) }, worker));
  return results;
}
