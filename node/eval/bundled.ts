// Why: how a task authored in tasks/<id>/ becomes a task row — the repository uploaded with
// `prepare`, committed with a fixed identity and date so the base commit id is the same in every
// sandbox and on the machine that built the patches — in one place for the builder and the tests.
import type { TaskInput } from "../../protocol/task.ts";

/** Fixed identity and dates: `git commit` of the same files gives the same commit id everywhere. */
export const BASE_COMMIT_ENV: Record<string, string> = {
  GIT_AUTHOR_NAME: "polar",
  GIT_AUTHOR_EMAIL: "polar@localhost",
  GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z",
  GIT_COMMITTER_NAME: "polar",
  GIT_COMMITTER_EMAIL: "polar@localhost",
  GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z",
};

export const BUNDLED_IMAGE = "polar-bookworm:dev";
export const BUNDLED_WORKDIR = "/work";

/** What tasks/<id>/task.json holds. */
export interface BundledTaskSource {
  repo: string;
  language: "python" | "javascript";
  bug_kind: string;
  parser: "pytest" | "unittest" | "tap";
  test_command: string;
  problem_statement: string;
  FAIL_TO_PASS: string[];
  PASS_TO_PASS: string[];
  /** What the evaluation needs in the sandbox (evaluator.requires); default from language and parser. */
  requires?: string[];
}

/** git applies the patches; python3 (with pytest for pytest tasks) or node runs the tests. */
export function bundledRequirements(source: Pick<BundledTaskSource, "language" | "parser">): string[] {
  if (source.language === "javascript") return ["git", "node"];
  return source.parser === "pytest" ? ["git", "python3", "python3:pytest"] : ["git", "python3"];
}

export interface BundledPatches {
  baseCommit: string;
  patch: string;
  testPatch: string;
  wrongPatch: string;
}

export function bundledTaskRow(id: string, source: BundledTaskSource, patches: BundledPatches): TaskInput {
  return {
    task_id: id,
    instance_id: id,
    repo: source.repo,
    base_commit: patches.baseCommit,
    problem_statement: source.problem_statement,
    instruction: source.problem_statement,
    runtime: {
      image: BUNDLED_IMAGE,
      workdir: BUNDLED_WORKDIR,
      prepare: [
        { type: "upload_dir", source: `${id}/repo`, path: BUNDLED_WORKDIR },
        {
          type: "exec",
          command: "git init -q && git add -A && git commit -q -m base",
          cwd: BUNDLED_WORKDIR,
          env: BASE_COMMIT_ENV,
          max_attempts: 1,
        },
      ],
    },
    evaluator: {
      strategy: "swe",
      config: { test_command: source.test_command, parser: source.parser, timeout_seconds: 120 },
      env: {},
      refresh_runtime: true,
      requires: source.requires ?? bundledRequirements(source),
    },
    patch: patches.patch,
    test_patch: patches.testPatch,
    FAIL_TO_PASS: source.FAIL_TO_PASS,
    PASS_TO_PASS: source.PASS_TO_PASS,
    metadata: { language: source.language, bug_kind: source.bug_kind },
    ...(patches.wrongPatch !== "" && { mock_wrong_patch: patches.wrongPatch }),
  };
}
