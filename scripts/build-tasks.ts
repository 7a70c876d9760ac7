#!/usr/bin/env bun
// Why: the bundled tasks are authored as plain folders (tasks/<id>/repo = the buggy base,
// gold/ = files of the fix, tests/ = the hidden tests, wrong/ = a plausible wrong fix for the
// mock policy, task.json = statement and test lists); this turns them into tasks/tasks.jsonl
// with patches made by real `git diff`, so every patch applies to the base by construction.
// Usage: bun scripts/build-tasks.ts [--check]   (--check: exit 1 when tasks.jsonl is stale)
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { BASE_COMMIT_ENV, bundledTaskRow, type BundledTaskSource } from "../node/eval/bundled.ts";

const TASKS_DIR = resolve(import.meta.dir, "../tasks");
const OUT = join(TASKS_DIR, "tasks.jsonl");

function git(cwd: string, args: string[]): string {
  const run = Bun.spawnSync(["git", "-c", "core.autocrlf=false", "-c", "commit.gpgsign=false", ...args], {
    cwd,
    env: { ...process.env, ...BASE_COMMIT_ENV },
    stdout: "pipe",
    stderr: "pipe",
  });
  if (run.exitCode !== 0) throw new Error(`git ${args.join(" ")} in ${cwd}: ${run.stderr.toString()}`);
  return run.stdout.toString();
}

/** The diff a folder overlaid on the committed base makes, then the base is restored. */
function overlayDiff(work: string, overlay: string): string {
  if (!existsSync(overlay)) return "";
  cpSync(overlay, work, { recursive: true });
  git(work, ["add", "-A"]);
  const diff = git(work, ["diff", "--cached", "--binary", "HEAD"]);
  git(work, ["reset", "-q", "--hard", "HEAD"]);
  git(work, ["clean", "-qfdx"]);
  return diff;
}

function buildOne(id: string): string {
  const dir = join(TASKS_DIR, id);
  const source = JSON.parse(readFileSync(join(dir, "task.json"), "utf8")) as BundledTaskSource;
  const work = mkdtempSync(join(tmpdir(), `polar-task-${id}-`));
  try {
    cpSync(join(dir, "repo"), work, { recursive: true });
    git(work, ["init", "-q"]);
    git(work, ["add", "-A"]);
    git(work, ["commit", "-q", "-m", "base"]);
    const baseCommit = git(work, ["rev-parse", "HEAD"]).trim();
    const row = bundledTaskRow(id, source, {
      baseCommit,
      patch: overlayDiff(work, join(dir, "gold")),
      testPatch: overlayDiff(work, join(dir, "tests")),
      wrongPatch: overlayDiff(work, join(dir, "wrong")),
    });
    return JSON.stringify(row);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const ids = readdirSync(TASKS_DIR, { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(join(TASKS_DIR, e.name, "task.json")))
  .map((e) => e.name)
  .sort();
const text = ids.map(buildOne).join("\n") + "\n";
if (process.argv.includes("--check")) {
  const current = existsSync(OUT) ? readFileSync(OUT, "utf8") : "";
  if (current !== text) {
    console.error("tasks/tasks.jsonl is stale: run bun scripts/build-tasks.ts");
    process.exit(1);
  }
  console.log(`tasks/tasks.jsonl is up to date (${ids.length} tasks)`);
} else {
  writeFileSync(OUT, text);
  console.log(`wrote ${OUT} (${ids.length} tasks)`);
}
