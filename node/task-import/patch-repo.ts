// Why: a task's patches must apply to the repository its `prepare` builds in every sandbox; the
// importer builds that same repository on the host (same files, the fixed identity and dates of
// node/eval/bundled.ts, so the same commit id) and makes each patch with real `git diff`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { PolarError } from "../../protocol/errors.ts";
import { BASE_COMMIT_ENV } from "../eval/bundled.ts";

/** The command `prepare` runs after uploading the files: the base commit. */
export const BASE_COMMIT_COMMAND = "git init -q && git add -A && git commit -q -m base";

export class PatchRepo {
  private constructor(
    private readonly dir: string,
    readonly baseCommit: string,
  ) {}

  /** A git repository holding `files` as one commit ("base"). */
  static create(files: Record<string, string>): PatchRepo {
    const dir = mkdtempSync(join(tmpdir(), "polar-import-"));
    try {
      writeAll(dir, files);
      git(dir, ["init", "-q"]);
      git(dir, ["add", "-A"]);
      git(dir, ["commit", "-q", "-m", "base"]);
      return new PatchRepo(dir, git(dir, ["rev-parse", "HEAD"]).trim());
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** The diff (`git diff --binary`) that writing `overlay` over the base makes; the base is restored. */
  diff(overlay: Record<string, string>): string {
    writeAll(this.dir, overlay);
    git(this.dir, ["add", "-A"]);
    const diff = git(this.dir, ["diff", "--cached", "--binary", "HEAD"]);
    git(this.dir, ["reset", "-q", "--hard", "HEAD"]);
    git(this.dir, ["clean", "-qfdx"]);
    return diff;
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function writeAll(dir: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    const full = join(dir, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
  }
}

function git(cwd: string, args: string[]): string {
  const run = Bun.spawnSync(["git", "-c", "core.autocrlf=false", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", ...args], {
    cwd,
    env: { ...process.env, ...BASE_COMMIT_ENV, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    stdout: "pipe",
    stderr: "pipe",
  });
  if (run.exitCode !== 0) throw new PolarError("internal", `git ${args.join(" ")} failed: ${run.stderr.toString().trim()}`);
  return run.stdout.toString();
}
