// Why: a bwrap per command pays for new namespaces and mounts (~15 ms on a loaded host) at every
// exec, so a process sandbox keeps bwrap *readers* (reader-job.ts) started ahead: a bwrap with the
// sandbox's fixed layout (root, mounts, network, capabilities, base env) running a shell that
// waits for a job id on stdin. The job `exec`s the command in place of that shell, so the bwrap
// exits with the command's own exit code, and killing the bwrap's process group tears down its
// PID namespace (--die-with-parent), background children included.
import { readFileSync } from "node:fs";
import { bwrapArgv, type BwrapLayout } from "./bwrap.ts";
import { jobParts, READER_SCRIPT } from "../reader-job.ts";
import { finishCapture, startCapture, type CapturingProcess, type SpawnCaptureResult } from "./spawn-capture.ts";
import type { ExecRequest } from "../types.ts";

/** Written by the reader shell once it runs inside the namespaces, before it reads its job. */
const READY = "R";

export interface BwrapReaderSetup {
  bwrap: string;
  layout: BwrapLayout;
  /** Where the reader shell starts, inside the sandbox (the job then changes to its own cwd). */
  cwd: string;
  /** The sandbox's base environment (the job exports the request's own on top). */
  env: Record<string, string>;
  /** The bwrap process's own working folder and environment, on the host. */
  hostCwd: string;
  hostEnv: Record<string, string>;
  /** Around bwrap on the host (joining the sandbox's cgroup), and before the reader shell inside it (prlimit). */
  wrap?: { outer: (argv: string[]) => string[]; inner: string[] };
}

export type BwrapReader = CapturingProcess;

/** Starts a reader; its `ready` resolves once its shell waits for a job (or it died first). */
export function startBwrapReader(setup: BwrapReaderSetup): BwrapReader {
  const shell = [...(setup.wrap?.inner ?? []), "/bin/sh", "-c", `printf ${READY}; ${READER_SCRIPT}`];
  const bwrap = bwrapArgv(setup.bwrap, setup.layout, { argv: shell, cwd: setup.cwd, env: setup.env });
  const argv = setup.wrap ? setup.wrap.outer(bwrap) : bwrap;
  return startCapture({ argv, cwd: setup.hostCwd, env: setup.hostEnv, stdin: true, readyByte: READY.charCodeAt(0) });
}

/** False once the reader's bwrap exited or is exiting (a zombie not yet reaped, a kill from outside). */
export function readerAlive(reader: BwrapReader): boolean {
  if (reader.child.exitCode !== null || reader.child.signalCode !== null) return false;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${reader.child.pid}/stat`, "latin1");
  } catch {
    return false;
  }
  const state = stat[stat.lastIndexOf(")") + 2];
  return state !== "Z" && state !== "X";
}

/** The job a bwrap reader sources: cwd (exit 1 when it is missing), env, then the command in its place. */
export function bwrapJobScript(request: ExecRequest, defaultCwd: string): string {
  const job = jobParts(request, defaultCwd);
  return [`${job.cd} || exit 1`, ...job.exports, `exec ${job.command}`, ""].join("\n");
}

/** Hands a reader its job id and the request's stdin, and waits for the command. */
export function runJob(reader: BwrapReader, id: string, request: ExecRequest): Promise<SpawnCaptureResult> {
  const input = request.stdin === undefined ? [`${id}\n`] : [`${id}\n`, request.stdin];
  return finishCapture(reader, { input, timeoutMs: request.timeoutMs, signal: request.signal, maxOutputBytes: request.maxOutputBytes });
}
