// Why: Polar's prepare actions (upload_file, upload_dir, exec with retries) set a task up in a
// sandbox; they are written once here over the Sandbox interface so that every runtime (docker,
// process) prepares tasks identically — and host sources are read only inside the roots of the
// sandbox's policy, whoever asked for them (a submitted task, a coordinator's assignment, an
// evaluator's fresh sandbox).
import { posix } from "node:path";
import { PolarError } from "../../protocol/errors.ts";
import { packHostDirectory, readHostFile } from "./host-sources.ts";
import type { SandboxPolicy } from "./sandbox-policy.ts";
import type { ExecResult, PrepareAction, Sandbox } from "./types.ts";

export interface PrepareStep {
  index: number;
  type: PrepareAction["type"];
  attempts: number;
  duration_ms: number;
}

const TAIL_BYTES = 2_000;

function tail(text: string): string {
  return text.length > TAIL_BYTES ? text.slice(-TAIL_BYTES) : text;
}

/** Relative paths are relative to the sandbox's workdir, as in Polar's task files. */
function inSandbox(sandbox: Sandbox, path: string): string {
  return posix.resolve(sandbox.spec.workdir, path);
}

/** A sandbox without a policy (a stand-in) may read no host path. */
function hostPathRoots(sandbox: Sandbox): SandboxPolicy["hostPathRoots"] {
  return sandbox.policy?.hostPathRoots ?? [];
}

async function fileContent(sandbox: Sandbox, action: Extract<PrepareAction, { type: "upload_file" }>): Promise<Uint8Array> {
  if (action.content !== undefined) return Buffer.from(action.content, "utf8");
  if (action.content_base64 !== undefined) return Buffer.from(action.content_base64, "base64");
  if (action.source !== undefined) return readHostFile(action.source, hostPathRoots(sandbox), "upload_file source");
  throw new PolarError("bad_request", `upload_file ${action.path}: content, content_base64 or source is required`);
}

async function runExec(sandbox: Sandbox, action: Extract<PrepareAction, { type: "exec" }>, signal?: AbortSignal): Promise<number> {
  let last: ExecResult | undefined;
  for (let attempt = 1; attempt <= action.max_attempts; attempt++) {
    if (signal?.aborted) throw new PolarError("internal", "prepare aborted");
    last = await sandbox.exec({
      command: action.command,
      cwd: action.cwd,
      env: action.env,
      timeoutMs: action.timeout_seconds === undefined ? undefined : action.timeout_seconds * 1000,
      signal,
    });
    if (last.exit_code === 0) return attempt;
  }
  const command = typeof action.command === "string" ? action.command : action.command.join(" ");
  const why = last?.timed_out ? "timed out" : `exited with ${last?.exit_code ?? "a signal"}`;
  throw new PolarError("internal", `prepare exec \`${command}\` ${why} after ${action.max_attempts} attempt(s)`, {
    exit_code: last?.exit_code ?? null,
    timed_out: last?.timed_out ?? false,
    stdout_tail: tail(last?.stdout ?? ""),
    stderr_tail: tail(last?.stderr ?? ""),
  });
}

/** Runs the actions in order; the first failure throws (a PolarError naming the step). */
export async function prepareSandbox(sandbox: Sandbox, actions: PrepareAction[], signal?: AbortSignal): Promise<PrepareStep[]> {
  const steps: PrepareStep[] = [];
  for (const [index, action] of actions.entries()) {
    const started = performance.now();
    let attempts = 1;
    switch (action.type) {
      case "upload_file":
        await sandbox.putFiles({ [inSandbox(sandbox, action.path)]: await fileContent(sandbox, action) }, { mode: action.mode });
        break;
      case "upload_dir":
        await sandbox.putArchive(await packHostDirectory(action.source, hostPathRoots(sandbox), "upload_dir source"), inSandbox(sandbox, action.path));
        break;
      case "exec":
        attempts = await runExec(sandbox, action, signal);
        break;
    }
    steps.push({ index, type: action.type, attempts, duration_ms: Math.round(performance.now() - started) });
  }
  return steps;
}
