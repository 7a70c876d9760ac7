// Why: the sandbox on a real Docker engine (dockerode, DOCKER_HOST or the default socket): an
// idle container per sandbox, commands through exec, files through the archive API, a private
// host run folder bind-mounted at SANDBOX_RUN_DIR, a host folder for the gateway socket bound
// read-only at SANDBOX_GATEWAY_DIR, and labels so that a restarted node removes what its earlier
// life left behind.
import { randomBytes } from "node:crypto";
import { mkdir, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import Docker from "dockerode";
import { PolarError } from "../../../protocol/errors.ts";
import { containerOptions, LABEL_NODE_ID, type ContainerPlan } from "./docker-config.ts";
import { discardReader, runOnReader, startReader, type ExecTarget, type Reader } from "./docker-exec.ts";
import { commandArgv, EXEC_STATE_DIR } from "../reader-job.ts";
import { ReaderStandby } from "../reader-standby.ts";
import { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from "../sandbox-limits.ts";
import { assertRuntimeAllowed, TRUSTED_CALLER_POLICY, type SandboxPolicy } from "../sandbox-policy.ts";
import { collect, firstFileIn, packDirectory, packEntries, type TarEntry } from "../tar.ts";
import { RuntimeSpec, type ExecRequest, type ExecResult, type Sandbox, type SandboxCreateOptions, type SandboxRuntime } from "../types.ts";

export interface DockerRuntimeOptions {
  /** Default: `new Docker()` (DOCKER_HOST or /var/run/docker.sock). */
  docker?: Docker;
  /** Folder holding `<node id>/<sandbox id>/{run,gateway}` folders; default `$TMPDIR/polar-docker-runs`. */
  runRoot?: string;
  /** docker-init as PID 1; default true. */
  init?: boolean;
  /**
   * Exec readers kept started ahead of commands (see docker-exec.ts), ready before create()
   * returns; default 2 (a prepare upload and the harness both start at once). 0: none.
   */
  standbyReaders?: number;
  /** What tasks may ask of a sandbox (host paths, network host, capabilities); default: everything (the caller is the operator). */
  policy?: SandboxPolicy;
  /** Per-container pids limit and disk limit (the latter where the engine's storage supports it); default DEFAULT_SANDBOX_LIMITS. */
  limits?: SandboxLimits;
  /** Where the "disk limit not enforced" notice goes (once per runtime); default console.warn. */
  warn?: (message: string) => void;
}

/** The engine's answer when its storage cannot limit a container's writable layer. */
const NO_STORAGE_QUOTA = /--storage-opt is supported only|storage-opt.*not supported/i;

export function defaultDockerRunRoot(): string {
  return join(tmpdir(), "polar-docker-runs");
}

/** A Docker engine error as a PolarError (404 → not_found). */
function dockerError(err: unknown, doing: string): PolarError {
  if (err instanceof PolarError) return err;
  const e = err as { statusCode?: number; json?: { message?: string }; message?: string };
  const message = e.json?.message ?? e.message ?? String(err);
  return new PolarError(e.statusCode === 404 ? "not_found" : "internal", `docker: ${doing}: ${message}`);
}

const ARCHIVE_TIMEOUT_MS = 300_000;

function isNotFound(err: unknown): boolean {
  return (err as { statusCode?: number }).statusCode === 404;
}

class DockerSandbox implements Sandbox {
  readonly backend = "docker" as const;
  readonly hostRunDir: string;
  readonly hostGatewayDir: string;
  private destroying: Promise<void> | undefined;
  /** Readers started ahead of the next execs (see docker-exec.ts). */
  private readonly standby: ReaderStandby<Reader>;
  private readonly target: ExecTarget;

  constructor(
    readonly id: string,
    readonly spec: RuntimeSpec,
    readonly policy: SandboxPolicy,
    private readonly sandboxDir: string,
    docker: Docker,
    private readonly container: Docker.Container,
    standbyReaders: number,
  ) {
    const folders = sandboxFolders(sandboxDir);
    this.hostRunDir = folders.run;
    this.hostGatewayDir = folders.gateway;
    const target: ExecTarget = { docker, container, hostRunDir: folders.run, hostJobsDir: folders.jobs, defaultCwd: spec.workdir };
    this.target = target;
    this.standby = new ReaderStandby(standbyReaders, { start: () => startReader(target), usable: (r) => !r.isEnded(), discard: discardReader });
  }

  /** Starts standby readers up to the configured number; resolves once they are ready. */
  arm(): Promise<void> {
    return this.standby.arm();
  }

  private inSandbox(path: string): string {
    return posix.resolve(this.spec.workdir, path);
  }

  private checkUsable(): void {
    if (this.destroying) throw new PolarError("not_found", `sandbox ${this.id} is destroyed`);
  }

  async exec(request: ExecRequest): Promise<ExecResult> {
    this.checkUsable();
    commandArgv(request.command); // an empty command fails before it takes a reader
    try {
      return await this.standby.use((reader) => runOnReader(this.target, reader, request));
    } catch (err) {
      throw dockerError(err, `exec in ${this.id}`);
    }
  }

  async putFiles(files: Record<string, string | Uint8Array>, options: { mode?: number } = {}): Promise<void> {
    const entries: TarEntry[] = Object.entries(files).map(([path, content]) => ({
      name: this.inSandbox(path).slice(1),
      type: "file",
      content: typeof content === "string" ? Buffer.from(content) : content,
      mode: options.mode ?? 0o644,
    }));
    await this.putArchive(await packEntries(entries), "/");
  }

  async putDirectory(hostDir: string, sandboxPath: string): Promise<void> {
    await this.putArchive(await packDirectory(hostDir), sandboxPath);
  }

  /**
   * Through `tar -x` on an exec reader (a fork in the sandbox; the engine's archive API re-execs
   * a helper per call, ~10× slower on a loaded host); images without tar use the archive API.
   */
  async putArchive(tar: Uint8Array, sandboxPath: string): Promise<void> {
    this.checkUsable();
    const path = this.inSandbox(sandboxPath);
    const extracted = await this.exec({
      command: ["/bin/sh", "-c", 'mkdir -p "$1" && exec tar -x -f - -C "$1" --no-same-owner', "polar-put", path],
      stdin: tar,
      timeoutMs: ARCHIVE_TIMEOUT_MS,
      maxOutputBytes: 64 * 1024,
    });
    if (extracted.exit_code === 0) return;
    try {
      await this.container.putArchive(Buffer.from(tar), { path });
    } catch (err) {
      throw dockerError(err, `put archive at ${path} (tar in the sandbox: ${extracted.stderr.trim() || extracted.exit_code})`);
    }
  }

  async readFile(sandboxPath: string): Promise<Uint8Array> {
    const path = this.inSandbox(sandboxPath);
    return firstFileIn(await this.getArchive(path), path);
  }

  async getArchive(sandboxPath: string): Promise<Uint8Array> {
    this.checkUsable();
    const path = this.inSandbox(sandboxPath);
    try {
      return await collect(await this.container.getArchive({ path }));
    } catch (err) {
      throw dockerError(err, `get archive of ${path}`);
    }
  }

  async alive(): Promise<boolean> {
    if (this.destroying) return false;
    try {
      return (await this.container.inspect()).State.Running === true;
    } catch {
      return false;
    }
  }

  destroy(): Promise<void> {
    this.destroying ??= (async () => {
      this.standby.close();
      await this.container.remove({ force: true, v: true }).catch((err) => {
        if (!isNotFound(err) && !/already in progress/.test(String(err))) throw dockerError(err, `remove ${this.id}`);
      });
      await rm(this.sandboxDir, { recursive: true, force: true });
    })();
    return this.destroying;
  }
}

/**
 * A sandbox's host folders: the run folder the container writes; the gateway socket's folder and
 * the job scripts' folder, which only the node writes and the container sees read-only.
 */
function sandboxFolders(sandboxDir: string): { run: string; gateway: string; jobs: string } {
  return { run: join(sandboxDir, "run"), gateway: join(sandboxDir, "gateway"), jobs: join(sandboxDir, "jobs") };
}

export function createDockerRuntime(options: DockerRuntimeOptions = {}): SandboxRuntime {
  const docker = options.docker ?? new Docker();
  const runRoot = options.runRoot ?? defaultDockerRunRoot();
  const init = options.init ?? true;
  const standbyReaders = options.standbyReaders ?? 2;
  const policy = options.policy ?? TRUSTED_CALLER_POLICY;
  const limits = options.limits ?? DEFAULT_SANDBOX_LIMITS;
  const warn = options.warn ?? ((message: string) => console.warn(message));
  /** Until the engine refuses it once: then containers run without a disk limit (said once). */
  let diskLimit = true;
  const createContainer = async (plan: Omit<ContainerPlan, "limits" | "diskLimit">): Promise<Docker.Container> => {
    const asked = diskLimit;
    try {
      return await docker.createContainer(containerOptions({ ...plan, limits, diskLimit: asked }));
    } catch (err) {
      const message = (err as { json?: { message?: string }; message?: string }).json?.message ?? (err as Error).message ?? "";
      if (!asked || !NO_STORAGE_QUOTA.test(message)) throw err;
      if (diskLimit) {
        diskLimit = false; // concurrent creates that were refused too retry without saying it again
        warn(
          `polar docker sandboxes: no disk limit — the engine cannot limit a container's writable layer (${message.trim()}); ${limits.diskMb} MiB per sandbox needs overlay2 on xfs mounted with pquota`,
        );
      }
      return docker.createContainer(containerOptions({ ...plan, limits, diskLimit: false }));
    }
  };
  return {
    backend: "docker",
    isolated: true,
    async create(create: SandboxCreateOptions): Promise<Sandbox> {
      const spec = RuntimeSpec.parse(create.spec);
      assertRuntimeAllowed(spec, policy);
      const sandboxId = `d-${randomBytes(6).toString("hex")}`;
      const sandboxDir = join(runRoot, create.labels.node_id, sandboxId);
      const folders = sandboxFolders(sandboxDir);
      // The jobs folder's mount point inside the run folder, made before the container can write there.
      await mkdir(join(folders.run, EXEC_STATE_DIR), { recursive: true, mode: 0o755 });
      for (const folder of [folders.gateway, folders.jobs]) await mkdir(folder, { mode: 0o755 });
      const plan = {
        sandboxId,
        spec,
        labels: create.labels,
        mounts: create.mounts ?? [],
        hostRunDir: folders.run,
        hostGatewayDir: folders.gateway,
        hostJobsDir: folders.jobs,
        init,
      };
      let container: Docker.Container | undefined;
      try {
        container = await createContainer(plan);
        await container.start();
      } catch (err) {
        await container?.remove({ force: true }).catch(() => undefined);
        await rm(sandboxDir, { recursive: true, force: true });
        throw dockerError(err, `create sandbox from ${spec.image}`);
      }
      const sandbox = new DockerSandbox(sandboxId, spec, policy, sandboxDir, docker, container, standbyReaders);
      await sandbox.arm();
      return sandbox;
    },
    async removeLeftovers(nodeId: string): Promise<number> {
      const leftovers = await docker.listContainers({ all: true, filters: { label: [`${LABEL_NODE_ID}=${nodeId}`] } }).catch((err) => {
        throw dockerError(err, "list containers");
      });
      await Promise.all(
        leftovers.map((info) =>
          docker
            .getContainer(info.Id)
            .remove({ force: true, v: true })
            .catch((err) => {
              if (!isNotFound(err)) throw dockerError(err, `remove leftover ${info.Id}`);
            }),
        ),
      );
      const nodeDir = join(runRoot, nodeId);
      const dirs = await readdir(nodeDir).catch(() => [] as string[]);
      await Promise.all(dirs.map((name) => rm(join(nodeDir, name), { recursive: true, force: true })));
      return leftovers.length;
    },
  };
}
