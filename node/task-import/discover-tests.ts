// Why: FAIL_TO_PASS and PASS_TO_PASS must name the tests as the evaluator will see them, so they
// are found by running the hidden tests in a sandbox of the task — against the untouched stub
// and (twice, some exercises use `random`) against the reference solution — and, when asked, the
// wrong-fix candidates are tried in the same sandbox until one the tests reject is found.
import type { Task } from "../../protocol/task.ts";
import { PolarError } from "../../protocol/errors.ts";
import { parseTestOutput, type TestReport } from "../eval/parsers/index.ts";
import { EVALUATION_PATH, freshEvalSandbox, type SandboxSource } from "../eval/sandbox-source.ts";
import { sweConfig } from "../eval/swe.ts";
import type { Sandbox } from "../runtime/types.ts";
import type { Mutant } from "./mutants.ts";

export interface DiscoveryInput {
  task: Task;
  /** Hidden test files (path relative to the workdir → text). */
  testFiles: Record<string, string>;
  /** The reference solution written over the stub(s). */
  goldFiles: Record<string, string>;
  /** Wrong-fix candidates, each as the files it writes (the rest of the solution stays gold). */
  candidates: { files: Record<string, string>; mutant: Mutant }[];
  source: SandboxSource;
  signal?: AbortSignal;
}

export interface Discovery {
  failToPass: string[];
  passToPass: string[];
  /** The first candidate the tests reject (preferring one that still passes some tests), if any. */
  wrong: { files: Record<string, string>; mutant: Mutant } | null;
  /** Tests the reference solution's run reported. */
  tests: number;
}

interface Run {
  report: TestReport;
  timedOut: boolean;
  exitCode: number | null;
  durationMs: number;
}

const passed = (run: Run, name: string) => run.report.get(name) === "passed";

async function runTests(sandbox: Sandbox, task: Task, timeoutMs: number, signal?: AbortSignal): Promise<Run> {
  const config = sweConfig(task);
  const started = performance.now();
  const result = await sandbox.exec({
    command: ["/bin/sh", "-c", config.test_command],
    cwd: sandbox.spec.workdir,
    // Files are rewritten between runs within a second: a bytecode cache keyed by mtime and size
    // would run the previous version of a same-sized file.
    env: { PATH: EVALUATION_PATH, PYTHONDONTWRITEBYTECODE: "1", ...task.evaluator?.env },
    timeoutMs,
    signal,
    maxOutputBytes: 8 * 1024 * 1024,
  });
  return {
    report: parseTestOutput(config.parser, `${result.stdout}\n${result.stderr}`),
    timedOut: result.timed_out,
    exitCode: result.exit_code,
    durationMs: performance.now() - started,
  };
}

function inWorkdir(sandbox: Sandbox, files: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(files).map(([path, text]) => [`${sandbox.spec.workdir}/${path}`, text]));
}

/** Runs the discovery; a reference solution that does not pass every test is a PolarError (bad_request). */
export async function discoverTests(input: DiscoveryInput): Promise<Discovery> {
  const { task, signal } = input;
  const timeoutMs = sweConfig(task).timeout_seconds * 1000;
  const sandbox = await freshEvalSandbox(input.source, task, `import-${task.task_id}`, signal);
  try {
    const head = await sandbox.exec({ command: ["git", "-c", "safe.directory=*", "rev-parse", "HEAD"], cwd: sandbox.spec.workdir, timeoutMs: 30_000, signal });
    if (head.stdout.trim() !== task.base_commit) {
      throw new PolarError("internal", `the sandbox built base commit ${head.stdout.trim() || "(none)"}, not ${task.base_commit}: the patches would not apply`);
    }
    await sandbox.putFiles(inWorkdir(sandbox, input.testFiles));
    const stub = await runTests(sandbox, task, timeoutMs, signal);
    await sandbox.putFiles(inWorkdir(sandbox, input.goldFiles));
    const gold = [await runTests(sandbox, task, timeoutMs, signal), await runTests(sandbox, task, timeoutMs, signal)];
    for (const run of gold) {
      if (run.timedOut) throw new PolarError("bad_request", `the tests ran over ${timeoutMs / 1000} s with the reference solution`);
      const failing = [...run.report].filter(([, outcome]) => outcome !== "passed" && outcome !== "skipped").map(([name]) => name);
      if (run.report.size === 0) throw new PolarError("bad_request", `the test run reported no tests (exit code ${run.exitCode})`);
      if (failing.length > 0) throw new PolarError("bad_request", `the reference solution fails ${failing.length} test(s): ${failing.slice(0, 5).join(", ")}`);
    }
    const names = [...gold[0]!.report.keys()].filter((n) => gold.every((run) => passed(run, n))).sort();
    const failToPass = names.filter((n) => !passed(stub, n));
    const passToPass = names.filter((n) => passed(stub, n));
    if (failToPass.length === 0) throw new PolarError("bad_request", "the untouched stub already passes every test (nothing to solve)");
    const scored = [...failToPass, ...passToPass];
    // A wrong fix may loop forever: it gets a few times the reference solution's time.
    const mutantTimeoutMs = Math.min(timeoutMs, Math.max(5_000, 10 * Math.max(...gold.map((r) => r.durationMs))));
    let rejected: Discovery["wrong"] = null;
    let wrong: Discovery["wrong"] = null;
    for (const candidate of input.candidates) {
      await sandbox.putFiles(inWorkdir(sandbox, { ...input.goldFiles, ...candidate.files }));
      const run = await runTests(sandbox, task, mutantTimeoutMs, signal);
      if (scored.every((n) => passed(run, n))) continue;
      rejected ??= candidate;
      if (!failToPass.some((n) => passed(run, n))) continue;
      // Plausible (some tests pass) — keep it only if a second run rejects it too.
      const again = await runTests(sandbox, task, mutantTimeoutMs, signal);
      if (!scored.every((n) => passed(again, n))) {
        wrong = candidate;
        break;
      }
    }
    return { failToPass, passToPass, wrong: wrong ?? rejected, tests: names.length };
  } finally {
    await input.source.release(sandbox).catch(() => undefined);
  }
}
