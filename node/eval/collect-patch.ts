// Why: the agent's change is what gets judged, so it is taken from the agent's work tree exactly:
// `git diff --binary` against the base commit through a temporary index (untracked files, deleted
// files, binary files and mode changes included; the repository's own index and HEAD untouched,
// even when the agent committed), leaving out harness state folders and caches.
import { randomBytes } from "node:crypto";
import { PolarError } from "../../protocol/errors.ts";
import { SANDBOX_RUN_DIR, type Sandbox } from "../runtime/types.ts";

/** Folders harnesses and tools leave in a work tree; never part of the agent's change. */
export const EXCLUDED_FOLDERS = [
  ".codex",
  ".claude",
  ".qwen",
  ".pi",
  ".mini",
  ".gemini",
  "node_modules",
  "__pycache__",
  ".pytest_cache",
  ".mypy_cache",
  ".ruff_cache",
  ".cache",
] as const;

export const MAX_PATCH_BYTES = 16 * 1024 * 1024;

export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function excludePathspecs(): string {
  const specs = [...EXCLUDED_FOLDERS.map((f) => `:(exclude,glob)**/${f}/**`), ":(exclude,glob)**/*.pyc"];
  return specs.map(shellQuote).join(" ");
}

export interface CollectedPatch {
  bytes: Uint8Array;
  /** Paths the patch touches (from its `diff --git` headers). */
  files: string[];
}

/** `diff --git a/x b/y` headers → the paths touched (b-side, a-side for deletions). */
export function patchFiles(patch: string): string[] {
  const files = new Set<string>();
  for (const match of patch.matchAll(/^diff --git a\/(.+?) b\/(.+)$/gm)) {
    files.add(match[2]!);
    if (match[1] !== match[2]) files.add(match[1]!);
  }
  return [...files];
}

export async function collectPatch(sandbox: Sandbox, base: string, signal?: AbortSignal): Promise<CollectedPatch> {
  const id = randomBytes(6).toString("hex");
  const out = `${SANDBOX_RUN_DIR}/polar-collect-${id}.patch`;
  const index = `${SANDBOX_RUN_DIR}/polar-collect-${id}.index`;
  const git = "git -c safe.directory='*' -c core.autocrlf=false -c core.quotepath=false";
  const paths = `-- . ${excludePathspecs()}`;
  const script = [
    "set -e",
    `export GIT_INDEX_FILE=${shellQuote(index)}`,
    `trap 'rm -f "$GIT_INDEX_FILE"' EXIT`,
    `${git} read-tree ${shellQuote(base)}`,
    `${git} add -A ${paths}`,
    `${git} diff --cached --binary --full-index --no-color --no-ext-diff --no-renames ${shellQuote(base)} ${paths} > ${shellQuote(out)}`,
  ].join("\n");
  const result = await sandbox.exec({ command: ["/bin/sh", "-c", script], cwd: sandbox.spec.workdir, timeoutMs: 120_000, signal, maxOutputBytes: 64 * 1024 });
  if (result.exit_code !== 0) {
    throw new PolarError("internal", `collecting the agent's patch failed (exit ${result.exit_code ?? "killed"}): ${result.stderr.trim().slice(-2000)}`);
  }
  const bytes = await sandbox.readFile(out);
  await sandbox.exec({ command: ["rm", "-f", out], timeoutMs: 30_000 });
  if (bytes.length > MAX_PATCH_BYTES) throw new PolarError("too_large", `the agent's patch is ${bytes.length} bytes (limit ${MAX_PATCH_BYTES})`);
  return { bytes, files: patchFiles(new TextDecoder().decode(bytes)) };
}
