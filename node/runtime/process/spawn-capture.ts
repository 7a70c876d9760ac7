// Why: every runtime that runs commands as host processes (bwrap, plain) needs the same
// mechanics — stdin fed then closed, stdout/stderr kept up to a bound with the rest counted, and
// a timeout or abort that kills the whole process tree (agents leave background processes). A
// process may be started ahead of its command (a bwrap reader) and handed its input later.
import type { Subprocess } from "bun";
import { BoundedOutput } from "../bounded-output.ts";
import type { ExecResult } from "../types.ts";

export interface StartRequest {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** Whether the process gets a stdin pipe (fed by finishCapture); /dev/null otherwise. */
  stdin: boolean;
  /** A byte the process writes first on stdout once it is ready (not kept in its output). */
  readyByte?: number;
}

export interface CaptureRequest {
  /** Written to stdin in order, then stdin is closed. */
  input?: (string | Uint8Array)[];
  timeoutMs?: number;
  signal?: AbortSignal;
  maxOutputBytes?: number;
}

export interface SpawnCaptureRequest extends Omit<StartRequest, "stdin" | "readyByte">, Omit<CaptureRequest, "input"> {
  stdin?: string | Uint8Array;
  /** Told the child at once (so an owner can kill it on destroy). */
  onSpawn?: (child: Subprocess) => void;
}

/** A started process whose output is being read. */
export interface CapturingProcess {
  child: Subprocess<"pipe" | "ignore", "pipe", "pipe">;
  stdout: BoundedOutput;
  stderr: BoundedOutput;
  /** Resolves once the process wrote its ready byte (or its stdout ended first). */
  ready: Promise<void>;
  /** Both streams read to their end. */
  drained: Promise<void>;
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

async function pump(stream: ReadableStream<Uint8Array>, into: BoundedOutput, readyByte?: number, onReady?: () => void): Promise<void> {
  let waiting = readyByte !== undefined;
  for await (const chunk of stream) {
    if (waiting && chunk.length > 0) {
      waiting = false;
      onReady?.();
      into.push(chunk[0] === readyByte ? chunk.subarray(1) : chunk);
    } else into.push(chunk);
  }
  onReady?.();
}

async function feed(stdin: import("bun").FileSink, input: (string | Uint8Array)[]): Promise<void> {
  try {
    for (const part of input) stdin.write(part);
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

export function startCapture(request: StartRequest): CapturingProcess {
  const child = Bun.spawn(request.argv, {
    cwd: request.cwd,
    env: request.env,
    stdin: request.stdin ? "pipe" : "ignore",
    stdout: "pipe",
    stderr: "pipe",
    detached: true, // its own process group, so a kill reaches every descendant
  });
  const stdout = new BoundedOutput();
  const stderr = new BoundedOutput();
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  // Readers first: a command that writes while we still feed its stdin must not block us both.
  const drained = Promise.all([pump(child.stdout, stdout, request.readyByte, onReady), pump(child.stderr, stderr)]).then(() => undefined);
  if (request.readyByte === undefined) onReady();
  return { child, stdout, stderr, ready, drained };
}

/** Feeds a started process its input and waits for it, killing its group on timeout or abort. */
export async function finishCapture(running: CapturingProcess, request: CaptureRequest): Promise<SpawnCaptureResult> {
  const started = performance.now();
  const { child } = running;
  if (request.maxOutputBytes !== undefined) running.stdout.limit = running.stderr.limit = request.maxOutputBytes;
  if (child.stdin) void feed(child.stdin, request.input ?? []);
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
  await running.drained;
  return {
    exitCode: child.signalCode ? null : code,
    stdout: { bytes: running.stdout.bytes(), dropped: running.stdout.dropped },
    stderr: { bytes: running.stderr.bytes(), dropped: running.stderr.dropped },
    timedOut,
    durationMs: Math.round(performance.now() - started),
  };
}

export function spawnCapture(request: SpawnCaptureRequest): Promise<SpawnCaptureResult> {
  const running = startCapture({ argv: request.argv, cwd: request.cwd, env: request.env, stdin: request.stdin !== undefined });
  request.onSpawn?.(running.child);
  return finishCapture(running, { ...request, input: request.stdin === undefined ? [] : [request.stdin] });
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
