// Why: the SWE-bench way of scoring an agent: its patch and the task's hidden test patch applied
// in a fresh sandbox of the task's image, the task's tests run and parsed, reward 1 only when
// every FAIL_TO_PASS test now passes and every PASS_TO_PASS test still does (grading.ts). A patch
// that does not apply is the agent's failure (reward 0 with the reason); a run the grading rules
// call invalid, or a test patch that does not apply, gives no reward (status invalid, its cause).
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { TestParserName, type BoundedText, type EvaluationResult } from "../../protocol/evaluation.ts";
import type { Task } from "../../protocol/task.ts";
import { PolarError } from "../../protocol/errors.ts";
import { SANDBOX_RUN_DIR, type Sandbox } from "../runtime/types.ts";
import { execLog, headOf } from "./bounded.ts";
import { patchFiles, shellQuote } from "./collect-patch.ts";
import { gradeTestRun } from "./grading.ts";
import { evaluationDetail } from "./detail.ts";
import { EVALUATION_PATH, freshEvalSandbox, type SandboxSource } from "./sandbox-source.ts";

export const SweConfig = z.looseObject({
  test_command: z.string().min(1),
  parser: TestParserName,
  timeout_seconds: z.number().positive().default(300),
});
export type SweConfig = z.infer<typeof SweConfig>;

const GIT = "git -c safe.directory='*' -c core.autocrlf=false";

export function sweConfig(task: Task): SweConfig {
  const parsed = SweConfig.safeParse(task.evaluator?.config ?? {});
  if (!parsed.success) throw new PolarError("bad_request", `task ${task.task_id}: evaluator.config: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

export function baseCommit(task: Task): string {
  return task.base_commit ?? "HEAD";
}

export interface SweEvaluation {
  task: Task;
  /** The agent's change (git diff --binary against the base); empty = unmodified repository. */
  patch: Uint8Array | string;
  source: SandboxSource;
  rolloutId: string;
  signal?: AbortSignal;
}

function bytesOf(patch: Uint8Array | string): Uint8Array {
  return typeof patch === "string" ? new TextEncoder().encode(patch) : patch;
}

/** Puts a patch file in the sandbox's run folder and `git apply`s it; null when it applied. */
async function applyPatch(sandbox: Sandbox, bytes: Uint8Array, name: string, signal?: AbortSignal): Promise<BoundedText | null> {
  const path = `${SANDBOX_RUN_DIR}/polar-eval-${randomBytes(6).toString("hex")}-${name}.patch`;
  await sandbox.putFiles({ [path]: bytes });
  const result = await sandbox.exec({
    command: ["/bin/sh", "-c", `${GIT} apply --verbose --binary --whitespace=nowarn ${shellQuote(path)}`],
    cwd: sandbox.spec.workdir,
    timeoutMs: 120_000,
    signal,
  });
  return result.exit_code === 0 ? null : execLog(result);
}

/** SWE-bench reverts the files the test patch touches before applying it (the agent may have edited tests). */
async function resetTestFiles(sandbox: Sandbox, base: string, files: string[], signal?: AbortSignal): Promise<void> {
  if (files.length === 0) return;
  const script = files.map((f) => `${GIT} checkout ${shellQuote(base)} -- ${shellQuote(f)} 2>/dev/null || rm -f -- ${shellQuote(f)}`).join("\n");
  await sandbox.exec({ command: ["/bin/sh", "-c", script], cwd: sandbox.spec.workdir, timeoutMs: 60_000, signal });
}

export async function evaluateSwePatch(input: SweEvaluation): Promise<EvaluationResult> {
  const started = performance.now();
  const { task, signal } = input;
  const config = sweConfig(task);
  const patchBytes = bytesOf(input.patch);
  const patchText = headOf(patchBytes);
  const files = patchFiles(new TextDecoder().decode(patchBytes));
  const elapsed = () => Math.round(performance.now() - started);
  const sandbox = await freshEvalSandbox(input.source, task, input.rolloutId, signal);
  try {
    const logs: Record<string, BoundedText> = {};
    const common = { patch: patchText, patch_files: files, sandbox_id: sandbox.id, logs };
    if (patchBytes.length > 0) {
      const failed = await applyPatch(sandbox, patchBytes, "agent", signal);
      if (failed) {
        logs.apply = failed;
        return {
          reward: 0,
          detail: evaluationDetail("swe", {
            ...common,
            status: "patch_failed",
            reason: "the agent's patch does not apply to the base commit",
            duration_ms: elapsed(),
          }),
        };
      }
    }
    const testPatch = task.test_patch ?? "";
    if (testPatch !== "") {
      await resetTestFiles(sandbox, baseCommit(task), patchFiles(testPatch), signal);
      const failed = await applyPatch(sandbox, bytesOf(testPatch), "test", signal);
      if (failed) {
        logs.test_patch = failed;
        return {
          reward: null,
          detail: evaluationDetail("swe", {
            ...common,
            status: "invalid",
            evaluation_error: "test_patch_failed",
            reason: "the task's test patch does not apply after the agent's patch",
            duration_ms: elapsed(),
          }),
        };
      }
    }
    const run = await sandbox.exec({
      command: ["/bin/sh", "-c", config.test_command],
      cwd: sandbox.spec.workdir,
      env: { PATH: EVALUATION_PATH, ...task.evaluator?.env },
      timeoutMs: config.timeout_seconds * 1000,
      signal,
      maxOutputBytes: 8 * 1024 * 1024,
    });
    logs.tests = execLog(run);
    const grade = gradeTestRun(task, config.parser, {
      exit_code: run.exit_code,
      timed_out: run.timed_out,
      output: `${run.stdout}\n${run.stderr}`,
      timeout_seconds: config.timeout_seconds,
    });
    const counts = {
      tests: grade.tests,
      fail_to_pass: { passed: grade.f2p, total: task.FAIL_TO_PASS.length },
      pass_to_pass: { passed: grade.p2p, total: task.PASS_TO_PASS.length },
      exit_code: run.exit_code,
    };
    if (!grade.valid) {
      return {
        reward: null,
        detail: evaluationDetail("swe", {
          ...common,
          ...counts,
          status: "invalid",
          evaluation_error: grade.error,
          reason: grade.reason,
          duration_ms: elapsed(),
        }),
      };
    }
    const status = grade.resolved ? "resolved" : "unresolved";
    return { reward: grade.resolved ? 1 : 0, detail: evaluationDetail("swe", { ...common, ...counts, status, duration_ms: elapsed() }) };
  } finally {
    await input.source.release(sandbox).catch(() => undefined);
  }
}
