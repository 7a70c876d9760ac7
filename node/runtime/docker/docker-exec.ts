// Why: Docker's exec API is slow to start a process (runc joins the container's namespaces:
// ~50 ms idle, 150+ ms on a loaded host), cannot kill what it started, and keeps the output
// stream open while any background child holds it. So every command runs through a *reader*: an
// exec'd `sh` (a session leader: runc calls setsid) that reads one job id from its stdin and
// sources the job script the host wrote into the jobs folder (a host folder only the node
// writes, bound read-only at JOBS_IN_SANDBOX, so one plain write: the container can neither
// rewrite a job nor plant a link there). A reader can be started ahead of time (armed), so a
// hand-out costs one write and a fork, not a runc exec. The job records its pid and exit code in
// the run folder (which the container writes: read back without following links), then kills
// its process group so leftovers cannot hold the stream; a timeout or abort kills that group
// from a second exec. Output is demultiplexed and kept up to a bound, the rest counted.
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { open, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Writable } from "node:stream";
import type Docker from "dockerode";
import { PolarError } from "../../../protocol/errors.ts";
import { BoundedOutput, DEFAULT_MAX_OUTPUT_BYTES } from "../bounded-output.ts";
import { jobParts, quote, READER_SCRIPT } from "../reader-job.ts";
import { SANDBOX_RUN_DIR, type ExecRequest, type ExecResult } from "../types.ts";

const PID_WAIT_MS = 5_000;
const POLL_MS = 10;

/** A demultiplexed output stream kept up to a bound. */
class BoundedSink extends Writable {
  readonly output = new BoundedOutput();

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.output.push(chunk);
    callback();
  }
}

export interface ExecTarget {
  docker: Docker;
  container: Docker.Container;
  hostRunDir: string;
  /** Bound read-only at JOBS_IN_SANDBOX; only the node writes here. */
  hostJobsDir: string;
  defaultCwd: string;
}

/** A started reader exec, waiting for its job id. */
export interface Reader {
  exec: Docker.Exec;
  stream: NodeJS.ReadWriteStream;
  stdout: BoundedSink;
  stderr: BoundedSink;
  ended: Promise<void>;
  isEnded: () => boolean;
}

function waitForEnd(stream: NodeJS.ReadableStream): Promise<void> {
  return new Promise((resolve) => {
    stream.once("end", resolve);
    stream.once("close", resolve);
    stream.once("error", () => resolve());
  });
}

/** A number the job wrote into the run folder; a link planted in its place is not followed (null). */
async function readNumber(path: string): Promise<number | null> {
  let text = "";
  try {
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      text = await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
  } catch {
    return null;
  }
  const value = Number.parseInt(text.trim(), 10);
  return Number.isFinite(value) ? value : null;
}

/** A job's state file (`pid`, `code`), in the run folder itself: no folder of the container's on the way. */
const stateName = (id: string, suffix: string) => `.job-${id}.${suffix}`;

/** The script a reader sources: pid, cwd, env, the command, its exit code, then the group's end. */
function jobScript(id: string, request: ExecRequest, defaultCwd: string): string {
  const job = jobParts(request, defaultCwd);
  const state = (suffix: string) => quote(`${SANDBOX_RUN_DIR}/${stateName(id, suffix)}`);
  return [
    `echo $$ > ${state("pid")}`,
    `${job.cd} || { echo 1 > ${state("code")}; kill -9 0; }`,
    ...job.exports,
    job.command,
    `echo $? > ${state("code")}`,
    "kill -9 0",
    "",
  ].join("\n");
}

/** Starts a reader: a runc exec, paid now so that a later command starts at once. */
export async function startReader(target: ExecTarget): Promise<Reader> {
  const exec = await target.container.exec({
    Cmd: ["/bin/sh", "-c", READER_SCRIPT],
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const stream = (await exec.start({ hijack: true, stdin: true })) as NodeJS.ReadWriteStream;
  const stdout = new BoundedSink();
  const stderr = new BoundedSink();
  target.docker.modem.demuxStream(stream, stdout, stderr);
  let ended = false;
  const end = waitForEnd(stream).then(() => {
    ended = true;
  });
  return { exec, stream, stdout, stderr, ended: end, isEnded: () => ended };
}

/** Closes a reader that will not be used (its shell reads EOF and exits). */
export function discardReader(reader: Reader): void {
  reader.stream.end();
}

/** Runs one command on a started reader (armed earlier or just now). */
export async function runOnReader(target: ExecTarget, reader: Reader, request: ExecRequest): Promise<ExecResult> {
  const started = performance.now();
  const id = randomBytes(8).toString("hex");
  const files = {
    script: join(target.hostJobsDir, `${id}.sh`),
    pid: join(target.hostRunDir, stateName(id, "pid")),
    code: join(target.hostRunDir, stateName(id, "code")),
  };
  let script: string;
  try {
    script = jobScript(id, request, target.defaultCwd);
  } catch (err) {
    discardReader(reader);
    throw err;
  }
  const limit = request.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  reader.stdout.output.limit = limit;
  reader.stderr.output.limit = limit;
  await writeFile(files.script, script);

  let timedOut = false;
  let killed = false;
  const kill = async () => {
    if (killed) return;
    killed = true;
    const deadline = performance.now() + PID_WAIT_MS;
    let pid = await readNumber(files.pid);
    while (pid === null && !reader.isEnded() && performance.now() < deadline) {
      await Bun.sleep(POLL_MS);
      pid = await readNumber(files.pid);
    }
    if (pid === null || reader.isEnded()) return;
    const killer = await target.container.exec({ Cmd: ["/bin/sh", "-c", `kill -9 -${pid}`], AttachStdout: true, AttachStderr: true });
    const out = await killer.start({});
    out.resume();
    await waitForEnd(out);
  };
  const killQuietly = () => void kill().catch(() => undefined); // a gone container ends the stream itself
  const timer = request.timeoutMs === undefined ? undefined : setTimeout(() => ((timedOut = true), killQuietly()), request.timeoutMs);
  if (request.signal?.aborted) killQuietly();
  request.signal?.addEventListener("abort", killQuietly, { once: true });

  if (reader.isEnded()) throw new PolarError("not_found", "the sandbox stopped");
  reader.stream.write(`${id}\n`);
  if (request.stdin !== undefined) reader.stream.write(Buffer.from(request.stdin));
  reader.stream.end();
  await reader.ended;
  clearTimeout(timer);
  request.signal?.removeEventListener("abort", killQuietly);

  let exitCode = killed ? null : await readNumber(files.code);
  if (exitCode === null && !killed) {
    // The job did not finish (container killed from outside, run folder removed).
    exitCode = await reader.exec.inspect().then(
      (info) => (info.Running ? null : info.ExitCode),
      () => null,
    );
  }
  void Promise.all(Object.values(files).map((path) => rm(path, { force: true }))).catch(() => undefined);
  return {
    exit_code: exitCode,
    stdout: reader.stdout.output.bytes().toString("utf8"),
    stderr: reader.stderr.output.bytes().toString("utf8"),
    stdout_dropped_bytes: reader.stdout.output.dropped,
    stderr_dropped_bytes: reader.stderr.output.dropped,
    timed_out: timedOut,
    duration_ms: Math.round(performance.now() - started),
  };
}
