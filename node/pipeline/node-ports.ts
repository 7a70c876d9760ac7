// Why: the pipeline's ports over the node's real parts — prepare actions (node/runtime), the
// sandboxed harness runner (node/harness), the evaluators and task rows (node/eval) — so
// `polar node` and the end-to-end tests wire the same implementations.
import type { Task } from "../../protocol/task.ts";
import { taskOfRequest } from "../../lib/task-catalog.ts";
import { evaluate } from "../eval/evaluate.ts";
import type { SandboxSource } from "../eval/sandbox-source.ts";
import { getHarness } from "../harness/registry.ts";
import { runInSandbox } from "../harness/sandbox-runner.ts";
import { HarnessOptions } from "../harness/types.ts";
import { prepareSandbox } from "../runtime/prepare.ts";
import { requirementDetail, type RequirementCheck } from "../eval/requirements.ts";
import type { EvaluabilityCheck, HarnessRunner, RolloutEvaluator, SandboxPreparer } from "./ports.ts";
import { RolloutFailure } from "./result.ts";

export const runtimePreparer: SandboxPreparer = {
  async prepare(sandbox, actions, signal) {
    await prepareSandbox(sandbox, [...actions], signal);
  },
};

/** snake_case agent settings (as trainers send them) → the adapters' options. */
const SETTING_NAMES: Record<string, keyof HarnessOptions> = {
  dialect: "dialect",
  max_retries: "maxRetries",
  argv: "argv",
  extra_args: "extraArgs",
  command_timeout_ms: "commandTimeoutMs",
  context_window: "contextWindow",
  max_output_tokens: "maxOutputTokens",
};

export function harnessOptions(settings: Record<string, unknown>, defaults: HarnessOptions = {}): HarnessOptions {
  const picked: Record<string, unknown> = { ...defaults };
  for (const [key, value] of Object.entries(settings)) {
    const name = SETTING_NAMES[key] ?? (Object.values(SETTING_NAMES).includes(key as keyof HarnessOptions) ? key : undefined);
    if (name) picked[name] = value;
  }
  return HarnessOptions.parse(picked);
}

export interface SandboxRunnerOptions {
  /** Model name given to the harness when the request names none. */
  defaultModel: string;
  /** Options every harness of this kind gets unless the request's settings say otherwise. */
  harnessDefaults?: Partial<Record<string, HarnessOptions>>;
}

export function sandboxHarnessRunner(options: SandboxRunnerOptions): HarnessRunner {
  return {
    async run(request) {
      const maxTurns = request.agent.settings.max_turns ?? request.agent.settings.max_iterations;
      const result = await runInSandbox({
        sandbox: request.sandbox,
        adapter: getHarness(request.harness),
        session: request.session.endpoint,
        model: request.agent.model_name ?? options.defaultModel,
        instruction: request.instruction,
        limits: { timeoutMs: request.timeoutMs, ...(typeof maxTurns === "number" ? { maxTurns } : {}) },
        options: harnessOptions(request.agent.settings, options.harnessDefaults?.[request.harness]),
        signal: request.signal,
      });
      return {
        exit_code: result.exitCode,
        timed_out: result.timedOut,
        final_output: result.finalOutput,
        ...(result.error ? { error: result.error } : {}),
        duration_ms: result.durationMs,
      };
    },
  };
}

export function taskEvaluator(source: SandboxSource, rowOf: (taskId: string) => Task | undefined): RolloutEvaluator {
  return {
    async evaluate(input) {
      const result = await evaluate({
        task: taskOfRequest(input.request, rowOf(input.request.task_id)),
        agentSandbox: input.agentSandbox,
        harness: { exitCode: input.harness.exit_code, timedOut: input.harness.timed_out, finalOutput: input.harness.final_output },
        source,
        rolloutId: input.rolloutId,
        signal: input.signal,
      });
      // Tests that could not judge the agent give no reward: the rollout is an infrastructure failure, masked.
      if (result.detail.status === "invalid") {
        throw new RolloutFailure("evaluation_invalid", `${result.detail.evaluation_error}: ${result.detail.reason}`, { ...result.detail, reward_given: false });
      }
      return { reward: result.reward ?? 0, detail: { ...result.detail, reward_given: result.reward !== null } };
    },
  };
}

/** node/eval's requirement check over the task a request is evaluated against. */
export function taskEvaluability(requirements: RequirementCheck, rowOf: (taskId: string) => Task | undefined): EvaluabilityCheck {
  return {
    async check(request, signal) {
      const task = taskOfRequest(request, rowOf(request.task_id));
      const problem = await requirements.check(task, signal);
      return problem ? { message: problem.message, detail: { ...requirementDetail(task, problem), reward_given: false } } : null;
    },
  };
}
