// Why: one Exercism exercise becomes one SWE-style Polar task: the statement is the problem, the
// stub (and read-only helpers) the repository the agent edits, the test files a hidden test
// patch the evaluator applies in a fresh sandbox, the reference solution the gold patch, and the
// test lists what running the tests showed. Neither the tests nor the reference solution are in
// the agent's repository. Every exercise of the track in the upstream layout goes through the
// same steps; one that cannot be a valid task is reported with the reason, never half-written.
import { Task, type TaskInput } from "../../protocol/task.ts";
import { asPolarError } from "../../protocol/errors.ts";
import { BUNDLED_IMAGE, BUNDLED_WORKDIR, BASE_COMMIT_ENV } from "../eval/bundled.ts";
import type { SandboxSource } from "../eval/sandbox-source.ts";
import { discoverTests } from "./discover-tests.ts";
import { exerciseRoles, problemStatement, testModules, type Exercise } from "./exercism-layout.ts";
import { pythonMutants } from "./mutants.ts";
import { BASE_COMMIT_COMMAND, PatchRepo } from "./patch-repo.ts";

/** What the evaluation sandbox needs: Python 3 with its standard library (3.10+: some reference solutions use `match`). */
export const EXERCISM_EVALUATION_REQUIRES = ["python3"];
export const DEFAULT_ID_PREFIX = "exercism-python-";
const TEST_TIMEOUT_SECONDS = 120;
/** Wrong-fix candidates tried per exercise. */
const MUTANT_CANDIDATES = 12;

export interface ImportOptions {
  /** Fresh sandboxes for running the tests. */
  source: SandboxSource;
  idPrefix?: string;
  /** Search a wrong fix for the mock engine's failing sessions (default true). */
  wrongVariants?: boolean;
  concurrency?: number;
  onResult?: (result: ImportResult) => void;
  signal?: AbortSignal;
}

export interface ImportResult {
  slug: string;
  task_id: string;
  /** The task row; absent when the exercise cannot be a valid task (see `problem`). */
  task?: TaskInput;
  problem: string | null;
  fail_to_pass: number;
  pass_to_pass: number;
  /** The wrong fix found for the mock policy, described (`line 12: "<=" → "<"`). */
  wrong_variant: string | null;
  duration_ms: number;
}

function pick(files: Record<string, string>, paths: string[]): Record<string, string> {
  return Object.fromEntries(paths.map((p) => [p, files[p]!]));
}

function taskRow(
  exercise: Exercise,
  taskId: string,
  parts: { statement: string; repoFiles: Record<string, string>; baseCommit: string; testCommand: string; patch: string; testPatch: string },
): TaskInput {
  const uploads = Object.entries(parts.repoFiles).map(([path, content]) => ({ type: "upload_file" as const, path: `${BUNDLED_WORKDIR}/${path}`, content }));
  return {
    task_id: taskId,
    instance_id: taskId,
    repo: "exercism/python",
    base_commit: parts.baseCommit,
    problem_statement: parts.statement,
    instruction: parts.statement,
    runtime: {
      image: BUNDLED_IMAGE,
      workdir: BUNDLED_WORKDIR,
      prepare: [...uploads, { type: "exec", command: BASE_COMMIT_COMMAND, cwd: BUNDLED_WORKDIR, env: BASE_COMMIT_ENV, max_attempts: 1 }],
    },
    evaluator: {
      strategy: "swe",
      config: { test_command: parts.testCommand, parser: "unittest", timeout_seconds: TEST_TIMEOUT_SECONDS },
      env: {},
      refresh_runtime: true,
    },
    patch: parts.patch,
    test_patch: parts.testPatch,
    FAIL_TO_PASS: [],
    PASS_TO_PASS: [],
    metadata: { source: "exercism/python", slug: exercise.slug, language: "python", evaluation_requires: EXERCISM_EVALUATION_REQUIRES },
  };
}

async function importOne(exercise: Exercise, options: ImportOptions): Promise<ImportResult> {
  const started = performance.now();
  const taskId = `${options.idPrefix ?? DEFAULT_ID_PREFIX}${exercise.slug}`;
  const result = (partial: Partial<ImportResult>): ImportResult => ({
    slug: exercise.slug,
    task_id: taskId,
    problem: null,
    fail_to_pass: 0,
    pass_to_pass: 0,
    wrong_variant: null,
    ...partial,
    duration_ms: Math.round(performance.now() - started),
  });
  let repo: PatchRepo | undefined;
  try {
    const roles = exerciseRoles(exercise);
    const repoFiles = pick(exercise.files, [...roles.solution, ...roles.editor]);
    const testFiles = pick(exercise.files, roles.test);
    const goldFiles = Object.fromEntries(roles.example.map((e) => [e.solves, exercise.files[e.path]!]));
    repo = PatchRepo.create(repoFiles);
    const row = taskRow(exercise, taskId, {
      statement: problemStatement(exercise, roles),
      repoFiles,
      baseCommit: repo.baseCommit,
      testCommand: `python3 -m unittest -v -b ${testModules(roles).join(" ")}`,
      patch: repo.diff(goldFiles),
      testPatch: repo.diff(testFiles),
    });
    const candidates =
      options.wrongVariants === false
        ? []
        : Object.entries(goldFiles)
            .filter(([path]) => path.endsWith(".py"))
            .flatMap(([path, text]) => pythonMutants(text, MUTANT_CANDIDATES).map((mutant) => ({ files: { [path]: mutant.text }, mutant })))
            .slice(0, MUTANT_CANDIDATES);
    const sources = roles.solution.filter((p) => p.endsWith(".py"));
    const found = await discoverTests({ task: Task.parse(row), testFiles, goldFiles, candidates, source: options.source, signal: options.signal });
    const task: TaskInput = {
      ...row,
      FAIL_TO_PASS: found.failToPass,
      PASS_TO_PASS: found.passToPass,
      ...(found.wrong ? { mock_wrong_patch: repo.diff(found.wrong.files) } : {}),
      // The tests are hidden: the mock policy checks its change by compiling it instead.
      ...(sources.length > 0 ? { mock_check_command: `python3 -m py_compile ${sources.join(" ")}` } : {}),
    };
    return result({
      task,
      fail_to_pass: found.failToPass.length,
      pass_to_pass: found.passToPass.length,
      wrong_variant: found.wrong?.mutant.description ?? null,
    });
  } catch (err) {
    const error = asPolarError(err);
    return result({ problem: error.code === "internal" && error.message === "internal error" ? String(err) : error.message });
  } finally {
    repo?.close();
  }
}

/** Imports every exercise (results in input order); at most `concurrency` sandboxes at once. */
export async function importExercises(exercises: Exercise[], options: ImportOptions): Promise<ImportResult[]> {
  const results: ImportResult[] = new Array(exercises.length);
  let next = 0;
  const worker = async () => {
    while (next < exercises.length && !options.signal?.aborted) {
      const index = next++;
      results[index] = await importOne(exercises[index]!, options);
      options.onResult?.(results[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 2, exercises.length)) }, worker));
  return results.filter((r) => r !== undefined);
}
