// Why: the sandbox for machines without Docker (the embedded demo, laptops, CI without an
// engine): a private folder on the host, each command run under bubblewrap with its own mount,
// PID and network namespaces and a read-only view of the host system — on a bwrap reader started
// ahead of it (bwrap-reader.ts), so a command costs a write and an exec, not new namespaces. Without bwrap it
// still runs commands, as plain processes in the folder, and says loudly that nothing is isolated.
// It has no images: RuntimeSpec.image is ignored (tasks upload their repository with `prepare`).
// Under bwrap a sandbox gets the operator's disk and process limits as far as the host allows
// (process-limits.ts: a tmpfs and a pids cgroup as root, rlimits otherwise); cpus and memory_mb
// are not enforced.
import { randomBytes } from "node:crypto";
import { existsSync, unlink, writeFileSync } from "node:fs";
import { mkdir, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { PolarError } from "../../../protocol/errors.ts";
import { warnOnce } from "../../../lib/warn-once.ts";
import type { Subprocess } from "bun";
import { findBwrap, systemSymlinks } from "./bwrap.ts";
import { bwrapJobScript, readerAlive, runJob, startBwrapReader, type BwrapReader, type BwrapReaderSetup } from "./bwrap-reader.ts";
import { mkdirSandbox, resolveSandboxPath, writeNoFollow, type PathMapping } from "./process-paths.ts";
import { ProcessLimiter, type LimitsInForce } from "./process-limits.ts";
import { commandArgv, JOBS_IN_SANDBOX } from "../reader-job.ts";
import { ReaderStandby } from "../reader-standby.ts";
import { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from "../sandbox-limits.ts";
import { assertRuntimeAllowed, TRUSTED_CALLER_POLICY, type SandboxPolicy } from "../sandbox-policy.ts";
import { packDirectory } from "../tar.ts";
import { killProcessGroup, spawnCapture, toExecResult, type SpawnCaptureResult } from "./spawn-capture.ts";
import {
  RuntimeSpec,
  SANDBOX_GATEWAY_DIR,
  SANDBOX_RUN_DIR,
  type ExecRequest,
  type ExecResult,
  type Mount,
  type Sandbox,
  type SandboxCreateOptions,
  type SandboxRuntime,
} from "../types.ts";

export interface ProcessRuntimeOptions {
  /** Folder holding `<node id>/<sandbox id>/` work dirs; default `$TMPDIR/polar-process`. */
  root?: string;
  /** Path of bwrap, or null to run unisolated; default: bwrap on PATH. */
  bwrap?: string | null;
  /** Where the "not isolated" warning goes; default: stderr, once per process. */
  warn?: (message: string) => void;
  /**
   * bwrap readers kept started ahead of commands (see bwrap-reader.ts), ready before create()
   * returns; default 2 (a prepare upload and the harness both start at once). 0: none.
   */
  standbyReaders?: number;
  /** What tasks may ask of a sandbox (host paths, network host, capabilities); default: everything (the caller is the operator). */
  policy?: SandboxPolicy;
  /** Per-sandbox disk and process limits (under bwrap); default DEFAULT_SANDBOX_LIMITS. */
  limits?: SandboxLimits;
}

/** Marks every host process a sandbox starts, so leftovers can be found after a crash. */
const MARKER_ENV = "POLAR_PROCESS_SANDBOX";
const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const SANDBOX_HOME = "/root";
const ARCHIVE_LIMIT_BYTES = 1024 * 1024 * 1024;
const HELPER_TIMEOUT_MS = 120_000;

export function defaultProcessRoot(): string {
  return join(tmpdir(), "polar-process");
}

class ProcessSandbox implements Sandbox {
  readonly backend = "process" as const;
  readonly hostRunDir: string;
  /** Beside the sandbox's root, bound read-only at SANDBOX_GATEWAY_DIR: the sandbox cannot plant links in it. */
  readonly hostGatewayDir: string;
  readonly isolated: boolean;
  private readonly rootDir: string;
  /**
   * Job scripts, on the host beside the sandbox's root and bound read-only at JOBS_IN_SANDBOX:
   * the sandbox cannot plant a symlink or rewrite a job there, so a job is one plain write.
   */
  private readonly jobsDir: string;
  private readonly mappings: PathMapping[];
  /** Every process started for this sandbox (readers armed or running, unisolated commands) until it exits. */
  private readonly processes = new Set<Subprocess>();
  /** Under bwrap: readers started ahead of the next commands (armed by init, once the limits are in force). */
  private standby: ReaderStandby<BwrapReader> | null = null;
  private limitsInForce: LimitsInForce | null = null;
  private destroyed = false;

  constructor(
    readonly id: string,
    readonly spec: RuntimeSpec,
    readonly policy: SandboxPolicy,
    private readonly dir: string,
    private readonly mounts: Mount[],
    private readonly bwrap: string | null,
    private readonly standbyReaders: number,
    private readonly limiter: ProcessLimiter | null,
  ) {
    this.isolated = bwrap !== null;
    this.rootDir = join(dir, "fs");
    this.jobsDir = join(dir, "jobs");
    this.hostRunDir = join(this.rootDir, ...SANDBOX_RUN_DIR.split("/").filter(Boolean));
    this.hostGatewayDir = join(dir, "gateway");
    this.mappings = [
      { sandbox: "/", host: this.rootDir, writable: true },
      ...mounts.map((m) => ({ sandbox: posix.normalize(m.sandbox), host: m.host, writable: !m.readonly })),
    ];
  }

  /** Creates the folders (the root on its tmpfs when limited), then arms the standby readers (create returns once they are ready). */
  async init(nodeId: string): Promise<void> {
    await mkdir(this.rootDir, { mode: 0o755 });
    await mkdir(this.jobsDir, { mode: 0o755 });
    await mkdir(this.hostGatewayDir, { mode: 0o755 });
    if (this.limiter) this.limitsInForce = await this.limiter.setUp(nodeId, this.id, this.rootDir, this.spec);
    for (const link of systemSymlinks()) await symlink(link.target, join(this.rootDir, link.path));
    for (const folder of [this.spec.workdir, "/tmp", SANDBOX_HOME, JOBS_IN_SANDBOX, SANDBOX_GATEWAY_DIR]) {
      await mkdirSandbox(resolveSandboxPath(this.mappings, folder));
    }
    if (this.bwrap) this.standby = this.readers(this.bwrap);
    await this.standby?.arm();
  }

  /** Limits in force for this sandbox (null without bwrap: nothing is limited). */
  limits(): LimitsInForce | null {
    return this.limitsInForce;
  }

  private readers(bwrap: string): ReaderStandby<BwrapReader> {
    const inForce = this.limitsInForce;
    const limiter = this.limiter;
    const setup: BwrapReaderSetup = {
      bwrap,
      layout: {
        rootDir: this.rootDir,
        mounts: [
          ...this.mounts,
          { host: this.jobsDir, sandbox: JOBS_IN_SANDBOX, readonly: true },
          { host: this.hostGatewayDir, sandbox: SANDBOX_GATEWAY_DIR, readonly: true },
        ],
        network: this.spec.network,
        capAdd: this.spec.cap_add,
      },
      cwd: this.spec.workdir,
      env: this.baseEnv(),
      hostCwd: this.rootDir,
      hostEnv: { [MARKER_ENV]: this.dir },
      ...(limiter && inForce ? { wrap: { outer: (argv: string[]) => limiter.outer(inForce, argv), inner: limiter.inner(inForce) } } : {}),
    };
    return new ReaderStandby(this.standbyReaders, {
      start: () => {
        const reader = startBwrapReader(setup);
        this.track(reader.child);
        return reader.ready.then(() => reader);
      },
      usable: readerAlive,
      discard: (reader) => killProcessGroup(reader.child.pid),
    });
  }

  private baseEnv(): Record<string, string> {
    return { PATH: SANDBOX_PATH, HOME: SANDBOX_HOME, LANG: "C.UTF-8", ...this.spec.env };
  }

  private track(child: Subprocess): void {
    this.processes.add(child);
    void child.exited.then(() => this.processes.delete(child));
  }

  /** Relative paths are relative to the workdir (as in Polar's task files and the docker runtime). */
  private absolute(sandboxPath: string): string {
    return posix.resolve(this.spec.workdir, sandboxPath);
  }

  private resolve(sandboxPath: string) {
    return resolveSandboxPath(this.mappings, this.absolute(sandboxPath));
  }

  private hostPath(sandboxPath: string): string {
    return this.resolve(sandboxPath).host;
  }

  private async run(request: ExecRequest): Promise<SpawnCaptureResult> {
    if (this.destroyed) throw new PolarError("not_found", `sandbox ${this.id} is destroyed`);
    if (this.isolated) {
      if (!this.standby) throw new PolarError("internal", `sandbox ${this.id} is not ready`);
      return this.runOnReader(this.standby, request);
    }
    // Unisolated: the command sees host paths; only cwd and HOME are mapped into the folder.
    const env: Record<string, string> = { ...this.baseEnv(), ...request.env };
    return spawnCapture({
      ...request,
      argv: commandArgv(request.command),
      cwd: this.hostPath(request.cwd ?? this.spec.workdir),
      env: { ...env, HOME: this.hostPath(env.HOME ?? SANDBOX_HOME), [MARKER_ENV]: this.dir },
      onSpawn: (child) => this.track(child),
    });
  }

  /** Writes the job script into the run folder (no symlink followed), then hands its id to a reader. */
  private async runOnReader(standby: ReaderStandby<BwrapReader>, request: ExecRequest): Promise<SpawnCaptureResult> {
    const id = randomBytes(8).toString("hex");
    const job = join(this.jobsDir, `${id}.sh`);
    writeFileSync(job, bwrapJobScript(request, this.spec.workdir), { mode: 0o644 });
    try {
      return await standby.use((reader) => runJob(reader, id, request));
    } finally {
      unlink(job, () => undefined);
    }
  }

  async exec(request: ExecRequest): Promise<ExecResult> {
    return toExecResult(await this.run(request));
  }

  /** Runs a helper (tar, cat) inside the sandbox and fails loudly when it fails. */
  private async helper(argv: string[], stdin?: Uint8Array): Promise<Buffer> {
    const result = await this.run({ command: argv, cwd: "/", stdin, timeoutMs: HELPER_TIMEOUT_MS, maxOutputBytes: ARCHIVE_LIMIT_BYTES });
    if (result.exitCode !== 0) {
      const message = result.stderr.bytes.toString("utf8").trim();
      throw new PolarError(/No such file/i.test(message) ? "not_found" : "internal", `${argv[0]} in sandbox ${this.id} failed: ${message}`);
    }
    if (result.stdout.dropped > 0) throw new PolarError("too_large", `output over ${ARCHIVE_LIMIT_BYTES} bytes`);
    return result.stdout.bytes;
  }

  async putFiles(files: Record<string, string | Uint8Array>, options: { mode?: number } = {}): Promise<void> {
    for (const [path, content] of Object.entries(files)) {
      await writeNoFollow(this.resolve(path), content, options.mode ?? 0o644);
    }
  }

  async putArchive(tar: Uint8Array, sandboxPath: string): Promise<void> {
    const hostDir = await mkdirSandbox(this.resolve(sandboxPath));
    if (this.isolated) {
      // Extracted inside the namespaces: symlinks in the archive or the sandbox resolve there.
      await this.helper(["tar", "-x", "-f", "-", "--no-same-owner", "-C", this.absolute(sandboxPath)], tar);
      return;
    }
    const result = await spawnCapture({
      argv: ["tar", "-x", "-f", "-", "--no-same-owner", "-C", hostDir],
      cwd: hostDir,
      env: { PATH: SANDBOX_PATH },
      stdin: tar,
    });
    if (result.exitCode !== 0) throw new PolarError("internal", `tar failed: ${result.stderr.bytes.toString("utf8")}`);
  }

  /** Packed in this process (a host `tar` would cost one more process start than the upload itself). */
  async putDirectory(hostDir: string, sandboxPath: string): Promise<void> {
    await this.putArchive(await packDirectory(hostDir), sandboxPath);
  }

  async readFile(sandboxPath: string): Promise<Uint8Array> {
    if (this.isolated) return this.helper(["cat", "--", this.absolute(sandboxPath)]);
    return readFile(this.hostPath(sandboxPath)).catch(() => {
      throw new PolarError("not_found", `no file ${sandboxPath} in sandbox ${this.id}`);
    });
  }

  /** A tar of the folder or file, its entries named from its basename (as Docker's archive API). */
  async getArchive(sandboxPath: string): Promise<Uint8Array> {
    const path = this.absolute(sandboxPath);
    const parent = posix.dirname(path);
    const name = posix.basename(path) || ".";
    if (this.isolated) return this.helper(["tar", "-c", "-f", "-", "-C", parent, name]);
    const result = await spawnCapture({
      argv: ["tar", "-c", "-f", "-", "-C", this.hostPath(parent), name],
      cwd: this.rootDir,
      env: { PATH: SANDBOX_PATH },
      maxOutputBytes: ARCHIVE_LIMIT_BYTES,
    });
    if (result.exitCode !== 0) throw new PolarError("not_found", `tar of ${path} failed: ${result.stderr.bytes.toString("utf8")}`);
    return result.stdout.bytes;
  }

  async alive(): Promise<boolean> {
    return !this.destroyed && existsSync(this.rootDir);
  }

  /** Kills every process it started (armed readers included) and waits for them, removes its limits (cgroup, tmpfs), then the folder. */
  async destroy(): Promise<void> {
    this.destroyed = true;
    this.standby?.close();
    const processes = [...this.processes];
    for (const child of processes) killProcessGroup(child.pid);
    await Promise.all(processes.map((child) => child.exited));
    if (this.limiter && this.limitsInForce) await this.limiter.tearDown(this.limitsInForce);
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** Pids of host processes whose environment carries the marker under `prefix`. */
async function markedProcesses(prefix: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc").catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const environ = await readFile(`/proc/${entry}/environ`, "latin1").catch(() => "");
    if (environ.split("\0").some((v) => v.startsWith(`${MARKER_ENV}=${prefix}`))) pids.push(Number(entry));
  }
  return pids;
}

export function createProcessRuntime(options: ProcessRuntimeOptions = {}): SandboxRuntime {
  const root = options.root ?? defaultProcessRoot();
  const bwrap = options.bwrap === undefined ? findBwrap() : options.bwrap;
  const warn = options.warn ?? warnOnce;
  const standbyReaders = options.standbyReaders ?? 2;
  const policy = options.policy ?? TRUSTED_CALLER_POLICY;
  let limiter: ProcessLimiter | null = null;
  /** Made at the first create or cleanup (it reads the host's cgroup mounts); none without bwrap. */
  const limiterOf = () => (bwrap ? (limiter ??= new ProcessLimiter({ limits: options.limits ?? DEFAULT_SANDBOX_LIMITS, warn })) : null);
  return {
    backend: "process",
    isolated: bwrap !== null,
    async create(create: SandboxCreateOptions): Promise<Sandbox> {
      const spec = RuntimeSpec.parse(create.spec);
      assertRuntimeAllowed(spec, policy);
      if (!bwrap) {
        warn(
          "WARNING: polar process sandbox WITHOUT ISOLATION — bwrap (Debian package bubblewrap) is not installed, so commands run as plain host processes with full access to this machine and its network.",
        );
      }
      const id = `p-${randomBytes(6).toString("hex")}`;
      const dir = join(root, create.labels.node_id, id);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await writeFile(join(dir, "labels.json"), JSON.stringify({ ...create.labels, sandbox_id: id }));
      const sandbox = new ProcessSandbox(id, spec, policy, dir, create.mounts ?? [], bwrap, standbyReaders, limiterOf());
      try {
        await sandbox.init(create.labels.node_id);
      } catch (err) {
        await sandbox.destroy();
        throw err;
      }
      return sandbox;
    },
    async removeLeftovers(nodeId: string): Promise<number> {
      const nodeDir = join(root, nodeId);
      for (const pid of await markedProcesses(`${nodeDir}/`)) {
        killProcessGroup(pid);
        try {
          process.kill(pid, "SIGKILL"); // not always a group leader
        } catch {
          // already gone
        }
      }
      await limiterOf()?.removeLeftovers(nodeId, nodeDir);
      const leftovers = await readdir(nodeDir).catch(() => [] as string[]);
      await Promise.all(leftovers.map((name) => rm(join(nodeDir, name), { recursive: true, force: true })));
      return leftovers.length;
    },
  };
}
