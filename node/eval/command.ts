// Why: tasks scored by a command rather than a test suite (Polar's `test_on_output`): the
// command runs in a fresh sandbox with the agent's patch applied, or in the agent's own sandbox,
// with the agent's final answer on stdin; or, without a command, the final answer itself is
// compared. Reward 1 when the exit code and the expected output match. The grading rules that fit
// a command (grading.ts) make it invalid instead: a timeout, or a command that could not start.
import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { BoundedText, EvaluationResult } from "../../protocol/evaluation.ts";
import type { Task } from "../../protocol/task.ts";
import { PolarError } from "../../protocol/errors.ts";
import { SANDBOX_RUN_DIR, type Sandbox } from "../runtime/types.ts";
import { execLog, headOf, tailOf } from "./bounded.ts";
import { shellQuote } from "./collect-patch.ts";
import { runnerMissing } from "./grading.ts";
import { evaluationDetail } from "./detail.ts";
import { EVALUATION_PATH, freshEvalSandbox, type SandboxSource } from "./sandbox-source.ts";

export const CommandConfig = z.looseObject({
  command: z.union([z.string().min(1), z.array(z.string()).min(1)]).optional(),
  /** Where the command runs: a fresh sandbox with the agent's patch applied, or the agent's. */
  sandbox: z.enum(["fresh", "agent"]).default("fresh"),
  expected_exit_code: z.number().int().default(0),
  /** Compared with the command's stdout, or with the agent's final answer when there is no command. */
  expected_output: z.string().optional(),
  match: z.enum(["exact", "contains", "regex"]).default("contains"),
  timeout_seconds: z.number().positive().default(300),
});
export type CommandConfig = z.infer<typeof CommandConfig>;

export interface CommandEvaluation {
  task: Task;
  finalOutput: string;
  /** The agent's change; applied in the fresh sandbox when not empty. */
  patch: Uint8Array;
  agentSandbox?: Sandbox;
  source?: SandboxSource;
  rolloutId: string;
  signal?: AbortSignal;
}

export function outputMatches(actual: string, expected: string, match: CommandConfig["match"]): boolean {
  if (match === "exact") return actual.trim() === expected.trim();
  if (match === "regex") return new RegExp(expected, "m").test(actual);
  return actual.includes(expected);
}

async function sandboxFor(input: CommandEvaluation, config: CommandConfig): Promise<{ sandbox: Sandbox; fresh: boolean }> {
  if (config.sandbox === "agent") {
    if (!input.agentSandbox) throw new PolarError("bad_request", "command evaluator with sandbox=agent needs the agent's sandbox");
    return { sandbox: input.agentSandbox, fresh: false };
  }
  if (!input.source) throw new PolarError("bad_request", "command evaluator needs a sandbox pool or runtime");
  return { sandbox: await freshEvalSandbox(input.source, input.task, input.rolloutId, input.signal), fresh: true };
}

export async function evaluateCommand(input: CommandEvaluation): Promise<EvaluationResult> {
  const started = performance.now();
  const parsed = CommandConfig.safeParse(input.task.evaluator?.config ?? {});
  if (!parsed.success) throw new PolarError("bad_request", `task ${input.task.task_id}: evaluator.config: ${z.prettifyError(parsed.error)}`);
  const config = parsed.data;
  const elapsed = () => Math.round(performance.now() - started);
  if (config.command === undefined) {
    if (config.expected_output === undefined)
      throw new PolarError("bad_request", `task ${input.task.task_id}: command evaluator needs command or expected_output`);
    const ok = outputMatches(input.finalOutput, config.expected_output, config.match);
    return {
      reward: ok ? 1 : 0,
      detail: evaluationDetail("command", { status: ok ? "passed" : "failed", logs: { output: tailOf(input.finalOutput) }, duration_ms: elapsed() }),
    };
  }
  const { sandbox, fresh } = await sandboxFor(input, config);
  try {
    const logs: Record<string, BoundedText> = {};
    if (fresh && input.patch.length > 0) {
      const path = `${SANDBOX_RUN_DIR}/polar-eval-${randomBytes(6).toString("hex")}.patch`;
      await sandbox.putFiles({ [path]: input.patch });
      const applied = await sandbox.exec({
        command: ["/bin/sh", "-c", `git -c safe.directory='*' apply --binary --whitespace=nowarn ${shellQuote(path)}`],
        timeoutMs: 120_000,
        signal: input.signal,
      });
      if (applied.exit_code !== 0) {
        logs.apply = execLog(applied);
        return {
          reward: 0,
          detail: evaluationDetail("command", {
            status: "patch_failed",
            reason: "the agent's patch does not apply",
            patch: headOf(input.patch),
            logs,
            sandbox_id: sandbox.id,
            duration_ms: elapsed(),
          }),
        };
      }
    }
    const run = await sandbox.exec({
      command: typeof config.command === "string" ? ["/bin/sh", "-c", config.command] : config.command,
      env: { PATH: EVALUATION_PATH, ...input.task.evaluator?.env },
      stdin: input.finalOutput,
      timeoutMs: config.timeout_seconds * 1000,
      signal: input.signal,
    });
    logs.command = execLog(run);
    const judged = { patch: fresh ? headOf(input.patch) : null, logs, exit_code: run.exit_code, sandbox_id: sandbox.id };
    if (run.timed_out) {
      return {
        reward: null,
        detail: evaluationDetail("command", {
          ...judged,
          status: "invalid",
          evaluation_error: "evaluator_timeout",
          reason: `the command ran over its ${config.timeout_seconds} s timeout`,
          duration_ms: elapsed(),
        }),
      };
    }
    const missing =
      config.expected_exit_code === run.exit_code ? null : runnerMissing({ exit_code: run.exit_code, output: `${run.stdout}\n${run.stderr}` }, false);
    if (missing) {
      return {
        reward: null,
        detail: evaluationDetail("command", {
          ...judged,
          status: "invalid",
          evaluation_error: "test_runner_missing",
          reason: `the command could not start: ${missing}`,
          duration_ms: elapsed(),
        }),
      };
    }
    const exitOk = run.exit_code === config.expected_exit_code;
    const outputOk = config.expected_output === undefined || outputMatches(run.stdout, config.expected_output, config.match);
    const ok = exitOk && outputOk;
    const reason = ok ? null : !exitOk ? `exit code ${run.exit_code}, expected ${config.expected_exit_code}` : "output does not match";
    return { reward: ok ? 1 : 0, detail: evaluationDetail("command", { ...judged, status: ok ? "passed" : "failed", reason, duration_ms: elapsed() }) };
  } finally {
    if (fresh && input.source) await input.source.release(sandbox).catch(() => undefined);
  }
}
