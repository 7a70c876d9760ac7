// Why: every runtime that runs commands as host processes (bwrap, plain) needs the same
// mechanics — stdin fed then closed, stdout/stderr kept up to a bound with the rest counted, and
// a timeout or abort that kills the whole process tree (agents leave background processes).
import type { ExecResult } from "./types.ts";

export const DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

export interface SpawnCaptureRequest {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  stdin?: string | Uint8Array;
  timeoutMs?: number;
  signal?: AbortSignal;
  maxOutputBytes?: number;
  /** Told the child's pid at once (so an owner can kill it on destroy). */
  onSpawn?: (pid: number) => void;
}

export interface CapturedOutput {
  bytes: Buffer;
  dropped: number;
}

export interface SpawnCaptureResult {
  exitCode: number | null;
  stdout: CapturedOutput;
  stderr: CapturedOutput;
  timedOut: boolean;
  durationMs: number;
}

async function readBounded(stream: ReadableStream<Uint8Array>, limit: number): Promise<CapturedOutput> {
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let dropped = 0;
  for await (const chunk of stream) {
    const room = Math.max(limit - kept, 0);
    if (room > 0) {
      const part = chunk.subarray(0, room);
      chunks.push(part);
      kept += part.length;
    }
    dropped += chunk.length - Math.min(chunk.length, room);
  }
  return { bytes: Buffer.concat(chunks), dropped };
}

async function feed(stdin: import("bun").FileSink, input: string | Uint8Array): Promise<void> {
  try {
    stdin.write(input);
    await stdin.end();
  } catch {
    // the command exited without reading all its input
  }
}

/** SIGKILL to the process group the child leads (it is spawned detached). */
export function killProcessGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

export async function spawnCapture(request: SpawnCaptureRequest): Promise<SpawnCaptureResult> {
  const started = performance.now();
  const limit = request.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const child = Bun.spawn(request.argv, {
    cwd: request.cwd,
    env: request.env,
    stdin: request.stdin === undefined ? "ignore" : "pipe",
    stdout: "pipe",
    stderr: "pipe",
    detached: true, // its own process group, so a kill reaches every descendant
  });
  request.onSpawn?.(child.pid);
  // Readers first: a command that writes while we still feed its stdin must not block us both.
  const stdout = readBounded(child.stdout, limit);
  const stderr = readBounded(child.stderr, limit);
  if (request.stdin !== undefined && child.stdin) void feed(child.stdin, request.stdin);
  let timedOut = false;
  const kill = () => killProcessGroup(child.pid);
  const timer = request.timeoutMs === undefined ? undefined : setTimeout(() => ((timedOut = true), kill()), request.timeoutMs);
  const onAbort = () => kill();
  if (request.signal?.aborted) kill();
  request.signal?.addEventListener("abort", onAbort, { once: true });
  const code = await child.exited;
  clearTimeout(timer);
  request.signal?.removeEventListener("abort", onAbort);
  // Background processes left behind would keep the pipes open.
  kill();
  return {
    exitCode: child.signalCode ? null : code,
    stdout: await stdout,
    stderr: await stderr,
    timedOut,
    durationMs: Math.round(performance.now() - started),
  };
}

export function toExecResult(result: SpawnCaptureResult): ExecResult {
  return {
    exit_code: result.exitCode,
    stdout: result.stdout.bytes.toString("utf8"),
    stderr: result.stderr.bytes.toString("utf8"),
    stdout_dropped_bytes: result.stdout.dropped,
    stderr_dropped_bytes: result.stderr.dropped,
    timed_out: result.timedOut,
    duration_ms: result.durationMs,
  };
}
