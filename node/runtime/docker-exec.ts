// Why: Docker's exec API cannot kill what it started and keeps the output stream open while any
// background child holds it. Every command therefore runs under a tiny sh wrapper in its own
// session (runc makes each exec a session leader): it records its pid and, when the command
// ends, its exit code in the sandbox's run folder (a host bind mount), then kills its process
// group so leftovers cannot hold the stream. A timeout or abort kills that group from a second
// exec. Output is demultiplexed and kept up to a bound, the rest counted.
import { randomBytes } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { Writable } from "node:stream";
import type Docker from "dockerode";
import { EXEC_STATE_DIR } from "./docker-config.ts";
import { SANDBOX_RUN_DIR, type ExecRequest, type ExecResult } from "./types.ts";

export const DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
const PID_WAIT_MS = 5_000;
const POLL_MS = 10;

const WRAPPER = [
  'd="$1"; id="$2"; shift 2',
  'echo $$ > "$d/$id.pid"',
  '"$@"',
  'echo $? > "$d/$id.code"',
  "kill -9 0",
].join("\n");

/** Keeps the first `limit` bytes written to it and counts the rest. */
class BoundedSink extends Writable {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  dropped = 0;

  constructor(private readonly limit: number) {
    super();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    const room = Math.max(this.limit - this.kept, 0);
    if (room > 0) {
      const part = chunk.subarray(0, room);
      this.chunks.push(part);
      this.kept += part.length;
    }
    this.dropped += chunk.length - Math.min(chunk.length, room);
    callback();
  }

  text(): string {
    return Buffer.concat(this.chunks).toString("utf8");
  }
}

export interface ExecTarget {
  docker: Docker;
  container: Docker.Container;
  hostRunDir: string;
  defaultCwd: string;
}

function commandArgv(command: string[] | string): string[] {
  return typeof command === "string" ? ["/bin/sh", "-c", command] : command;
}

function waitForEnd(stream: NodeJS.ReadableStream): Promise<void> {
  return new Promise((resolve) => {
    stream.once("end", resolve);
    stream.once("close", resolve);
    stream.once("error", () => resolve());
  });
}

async function readNumber(path: string): Promise<number | null> {
  const text = await readFile(path, "utf8").catch(() => "");
  const value = Number.parseInt(text.trim(), 10);
  return Number.isFinite(value) ? value : null;
}

export async function dockerExec(target: ExecTarget, request: ExecRequest): Promise<ExecResult> {
  const started = performance.now();
  const argv = commandArgv(request.command);
  const id = randomBytes(8).toString("hex");
  const stateDir = join(target.hostRunDir, EXEC_STATE_DIR);
  const pidFile = join(stateDir, `${id}.pid`);
  const codeFile = join(stateDir, `${id}.code`);
  const hasStdin = request.stdin !== undefined;
  const exec = await target.container.exec({
    Cmd: ["/bin/sh", "-c", WRAPPER, "polar-exec", `${SANDBOX_RUN_DIR}/${EXEC_STATE_DIR}`, id, ...argv],
    AttachStdin: hasStdin,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    WorkingDir: request.cwd ?? target.defaultCwd,
    Env: Object.entries(request.env ?? {}).map(([k, v]) => `${k}=${v}`),
  });
  const stream = await exec.start(hasStdin ? { hijack: true, stdin: true } : {});
  const limit = request.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const stdout = new BoundedSink(limit);
  const stderr = new BoundedSink(limit);
  target.docker.modem.demuxStream(stream, stdout, stderr);
  const ended = waitForEnd(stream);
  let finished = false;
  void ended.then(() => (finished = true));

  let timedOut = false;
  let killed = false;
  const kill = async () => {
    if (killed) return;
    killed = true;
    const deadline = performance.now() + PID_WAIT_MS;
    let pid = await readNumber(pidFile);
    while (pid === null && !finished && performance.now() < deadline) {
      await Bun.sleep(POLL_MS);
      pid = await readNumber(pidFile);
    }
    if (pid === null || finished) return;
    const killer = await target.container.exec({ Cmd: ["/bin/sh", "-c", `kill -9 -${pid}`], AttachStdout: true, AttachStderr: true });
    await waitForEnd(await killer.start({})).catch(() => undefined);
  };
  const onKillError = () => undefined; // the container is gone: its stream ends by itself
  const timer =
    request.timeoutMs === undefined ? undefined : setTimeout(() => ((timedOut = true), kill().catch(onKillError)), request.timeoutMs);
  const onAbort = () => void kill().catch(onKillError);
  if (request.signal?.aborted) onAbort();
  request.signal?.addEventListener("abort", onAbort, { once: true });

  if (hasStdin) {
    const duplex = stream as NodeJS.ReadWriteStream;
    duplex.write(Buffer.from(request.stdin as string | Uint8Array));
    duplex.end();
  }
  await ended;
  clearTimeout(timer);
  request.signal?.removeEventListener("abort", onAbort);

  let exitCode = killed ? null : await readNumber(codeFile);
  if (exitCode === null && !killed) {
    // The wrapper did not finish (container killed from outside, run folder removed).
    exitCode = await exec.inspect().then((info) => (info.Running ? null : info.ExitCode), () => null);
  }
  await Promise.all([rm(pidFile, { force: true }), rm(codeFile, { force: true })]);
  return {
    exit_code: exitCode,
    stdout: stdout.text(),
    stderr: stderr.text(),
    stdout_dropped_bytes: stdout.dropped,
    stderr_dropped_bytes: stderr.dropped,
    timed_out: timedOut,
    duration_ms: Math.round(performance.now() - started),
  };
}
