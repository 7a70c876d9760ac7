// Why: runs an adapter's command as a plain host process — the runner of tests, the embedded
// demo and trusted setups. Sandboxed runners (docker, bwrap) reuse the same adapters and the
// same contract: stdin closed, a minimal environment, and a timeout that kills the whole
// process group (agents start background processes).
import { dirname } from "node:path";
import { chmod, mkdir, writeFile } from "node:fs/promises";
import type { HarnessAdapter, HarnessExit, HarnessLaunch, HarnessOutcome, HarnessSpec } from "./types.ts";

export interface HostRunOptions {
  /** Added last to the environment (tests set proxy variables here). */
  extraEnv?: Record<string, string>;
  /** Argv put before the harness command (e.g. `strace -f -o file`). */
  prefix?: string[];
  /** Between SIGTERM and SIGKILL of the process group on timeout. */
  killGraceMs?: number;
}

export interface HostRunResult extends HarnessOutcome {
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
}

const SYSTEM_PATH = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];
const OUTPUT_LIMIT_BYTES = 4 * 1024 * 1024;
const DEFAULT_KILL_GRACE_MS = 2000;

/** bun (for mini) and node (for the npm-installed CLIs) first, then the system folders. */
export function hostPath(): string {
  const node = Bun.which("node");
  const dirs = [dirname(process.execPath), ...(node ? [dirname(node)] : []), ...SYSTEM_PATH];
  return [...new Set(dirs)].join(":");
}

export function baseEnv(homeDir: string): Record<string, string> {
  return { PATH: hostPath(), HOME: homeDir, LANG: "C.UTF-8" };
}

/** Reads a stream to text, keeping the first OUTPUT_LIMIT_BYTES (the rest is drained). */
async function readCapped(stream: ReadableStream<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let dropped = 0;
  for await (const chunk of stream) {
    const room = OUTPUT_LIMIT_BYTES - kept;
    if (room > 0) {
      const part = chunk.subarray(0, room);
      chunks.push(part);
      kept += part.length;
    }
    dropped += chunk.length - Math.min(chunk.length, Math.max(room, 0));
  }
  const text = new TextDecoder().decode(Buffer.concat(chunks));
  return dropped > 0 ? `${text}\n[polar: ${dropped} more bytes dropped]` : text;
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}

/** Writes an adapter's private config files (owner-only) and folders to the host's disk. */
export async function writeLaunchFiles(launch: HarnessLaunch): Promise<void> {
  for (const dir of launch.dirs) await mkdir(dir, { recursive: true, mode: 0o700 });
  for (const [path, content] of Object.entries(launch.files)) {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await writeFile(path, content, { mode: 0o600 });
    await chmod(path, 0o600);
  }
}

export async function runOnHost(adapter: HarnessAdapter, spec: HarnessSpec, run: HostRunOptions = {}): Promise<HostRunResult> {
  await mkdir(spec.homeDir, { recursive: true, mode: 0o700 });
  const launch = await adapter.prepare(spec);
  await writeLaunchFiles(launch);
  const started = performance.now();
  const child = Bun.spawn([...(run.prefix ?? []), ...launch.command], {
    cwd: spec.workDir,
    env: { ...baseEnv(spec.homeDir), ...launch.env, ...run.extraEnv },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    detached: true, // own process group, so the timeout reaches every descendant
  });
  const stdoutText = readCapped(child.stdout);
  const stderrText = readCapped(child.stderr);
  let timedOut = false;
  let killTimer: ReturnType<typeof setTimeout> | undefined;
  const timeoutTimer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid, "SIGTERM");
    killTimer = setTimeout(() => killGroup(child.pid, "SIGKILL"), run.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
  }, spec.limits.timeoutMs);
  const exitCode = await child.exited;
  clearTimeout(timeoutTimer);
  clearTimeout(killTimer);
  // Background processes the agent left behind would hold the output pipes open.
  killGroup(child.pid, "SIGKILL");
  const exit: HarnessExit = {
    exitCode: child.signalCode ? null : exitCode,
    stdout: await stdoutText,
    stderr: await stderrText,
    timedOut,
  };
  return {
    ...adapter.collect(exit),
    stdout: exit.stdout,
    stderr: exit.stderr,
    timedOut,
    durationMs: Math.round(performance.now() - started),
  };
}
