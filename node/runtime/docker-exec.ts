// Why: Docker's exec API is slow to start a process (runc joins the container's namespaces:
// ~50 ms idle, 150+ ms on a loaded host), cannot kill what it started, and keeps the output
// stream open while any background child holds it. So every command runs through a *reader*: an
// exec'd `sh` (a session leader: runc calls setsid) that reads one job id from its stdin and
// sources the job script the host wrote into the run folder. A reader can be started ahead of
// time (armed), so a hand-out costs one write and a fork, not a runc exec. The job records its
// pid and exit code in the run folder, then kills its process group so leftovers cannot hold
// the stream; a timeout or abort kills that group from a second exec. Output is demultiplexed
// and kept up to a bound, the rest counted.
import { randomBytes } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Writable } from "node:stream";
import type Docker from "dockerode";
import { PolarError } from "../errors.ts";
import { EXEC_STATE_DIR } from "./docker-config.ts";
import { SANDBOX_RUN_DIR, type ExecRequest, type ExecResult } from "./types.ts";

export const DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
const PID_WAIT_MS = 5_000;
const POLL_MS = 10;
const STATE_IN_SANDBOX = `${SANDBOX_RUN_DIR}/${EXEC_STATE_DIR}`;
const READER = `IFS= read -r id || exit 0; . "${STATE_IN_SANDBOX}/$id.sh"`;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Keeps the first `limit` bytes written to it and counts the rest. */
class BoundedSink extends Writable {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  limit = DEFAULT_MAX_OUTPUT_BYTES;
  dropped = 0;

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

/** A started reader exec, waiting for its job id. */
export interface Reader {
  exec: Docker.Exec;
  stream: NodeJS.ReadWriteStream;
  stdout: BoundedSink;
  stderr: BoundedSink;
  ended: Promise<void>;
  isEnded: () => boolean;
}

function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
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

/** The script a reader sources: pid, cwd, env, the command, its exit code, then the group's end. */
function jobScript(id: string, request: ExecRequest, defaultCwd: string): string {
  const argv = typeof request.command === "string" ? ["/bin/sh", "-c", request.command] : request.command;
  if (argv.length === 0) throw new PolarError("bad_request", "empty command");
  const state = (suffix: string) => quote(`${STATE_IN_SANDBOX}/${id}.${suffix}`);
  const lines = [`echo $$ > ${state("pid")}`, `cd ${quote(request.cwd ?? defaultCwd)} || { echo 1 > ${state("code")}; kill -9 0; }`];
  for (const [name, value] of Object.entries(request.env ?? {})) {
    if (!ENV_NAME.test(name)) throw new PolarError("bad_request", `invalid environment variable name ${JSON.stringify(name)}`);
    lines.push(`export ${name}=${quote(value)}`);
  }
  lines.push(argv.map(quote).join(" "), `echo $? > ${state("code")}`, "kill -9 0", "");
  return lines.join("\n");
}

/** Starts a reader: a runc exec, paid now so that a later command starts at once. */
export async function startReader(target: ExecTarget): Promise<Reader> {
  const exec = await target.container.exec({
    Cmd: ["/bin/sh", "-c", READER],
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
  const stateDir = join(target.hostRunDir, EXEC_STATE_DIR);
  const files = { script: join(stateDir, `${id}.sh`), pid: join(stateDir, `${id}.pid`), code: join(stateDir, `${id}.code`) };
  let script: string;
  try {
    script = jobScript(id, request, target.defaultCwd);
  } catch (err) {
    discardReader(reader);
    throw err;
  }
  const limit = request.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  reader.stdout.limit = limit;
  reader.stderr.limit = limit;
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
    exitCode = await reader.exec.inspect().then((info) => (info.Running ? null : info.ExitCode), () => null);
  }
  void Promise.all(Object.values(files).map((path) => rm(path, { force: true }))).catch(() => undefined);
  return {
    exit_code: exitCode,
    stdout: reader.stdout.text(),
    stderr: reader.stderr.text(),
    stdout_dropped_bytes: reader.stdout.dropped,
    stderr_dropped_bytes: reader.stderr.dropped,
    timed_out: timedOut,
    duration_ms: Math.round(performance.now() - started),
  };
}
