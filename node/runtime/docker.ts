// Why: the sandbox on a real Docker engine (dockerode, DOCKER_HOST or the default socket): an
// idle container per sandbox, commands through exec, files through the archive API, a private
// host run folder bind-mounted at SANDBOX_RUN_DIR, and labels so that a restarted node removes
// what its earlier life left behind.
import { randomBytes } from "node:crypto";
import { mkdir, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import Docker from "dockerode";
import { PolarError } from "../errors.ts";
import { containerOptions, EXEC_STATE_DIR, LABEL_NODE_ID } from "./docker-config.ts";
import { discardReader, runOnReader, startReader, type ExecTarget, type Reader } from "./docker-exec.ts";
import { collect, firstFileIn, packDirectory, packEntries, type TarEntry } from "./tar.ts";
import { RuntimeSpec, type ExecRequest, type ExecResult, type Sandbox, type SandboxCreateOptions, type SandboxRuntime } from "./types.ts";

export interface DockerRuntimeOptions {
  /** Default: `new Docker()` (DOCKER_HOST or /var/run/docker.sock). */
  docker?: Docker;
  /** Folder holding `<node id>/<sandbox id>/` run folders; default `$TMPDIR/polar-docker-runs`. */
  runRoot?: string;
  /** docker-init as PID 1; default true. */
  init?: boolean;
  /** Start the first exec's reader before create() returns (fast first command); default true. */
  armReader?: boolean;
}

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

function isNotFound(err: unknown): boolean {
  return (err as { statusCode?: number }).statusCode === 404;
}

class DockerSandbox implements Sandbox {
  readonly backend = "docker" as const;
  private destroying: Promise<void> | undefined;
  /** A reader started ahead of the next exec (see docker-exec.ts). */
  private standby: Promise<Reader> | undefined;
  private readonly target: ExecTarget;

  constructor(
    readonly id: string,
    readonly spec: RuntimeSpec,
    readonly hostRunDir: string,
    docker: Docker,
    private readonly container: Docker.Container,
  ) {
    this.target = { docker, container, hostRunDir, defaultCwd: spec.workdir };
  }

  /** Starts the standby reader; resolves once it is ready (failures surface at the next exec). */
  arm(): Promise<void> {
    if (this.destroying) return Promise.resolve();
    const reader = startReader(this.target);
    this.standby = reader;
    return reader.then(
      () => undefined,
      () => undefined,
    );
  }

  private async reader(): Promise<Reader> {
    const armed = this.standby;
    this.standby = undefined;
    const ready = armed ? await armed.catch(() => undefined) : undefined;
    if (ready && !ready.isEnded()) return ready;
    return startReader(this.target);
  }

  private inSandbox(path: string): string {
    return posix.resolve(this.spec.workdir, path);
  }

  private checkUsable(): void {
    if (this.destroying) throw new PolarError("not_found", `sandbox ${this.id} is destroyed`);
  }

  async exec(request: ExecRequest): Promise<ExecResult> {
    this.checkUsable();
    const argv = typeof request.command === "string" ? [request.command] : request.command;
    if (argv.length === 0) throw new PolarError("bad_request", "empty command");
    try {
      const reader = await this.reader();
      void this.arm(); // the next exec's reader starts while this one runs
      return await runOnReader(this.target, reader, request);
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

  async putArchive(tar: Uint8Array, sandboxPath: string): Promise<void> {
    this.checkUsable();
    const path = this.inSandbox(sandboxPath);
    const put = () => this.container.putArchive(Buffer.from(tar), { path });
    try {
      await put();
    } catch (err) {
      if (!isNotFound(err)) throw dockerError(err, `put archive at ${path}`);
      // Docker extracts only into an existing folder.
      const made = await this.exec({ command: ["mkdir", "-p", path] });
      if (made.exit_code !== 0) throw new PolarError("internal", `mkdir -p ${path} failed: ${made.stderr.trim()}`);
      await put().catch((again) => {
        throw dockerError(again, `put archive at ${path}`);
      });
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
      void this.standby?.then(discardReader, () => undefined);
      this.standby = undefined;
      await this.container.remove({ force: true, v: true }).catch((err) => {
        if (!isNotFound(err) && !/already in progress/.test(String(err))) throw dockerError(err, `remove ${this.id}`);
      });
      await rm(this.hostRunDir, { recursive: true, force: true });
    })();
    return this.destroying;
  }
}

export function createDockerRuntime(options: DockerRuntimeOptions = {}): SandboxRuntime {
  const docker = options.docker ?? new Docker();
  const runRoot = options.runRoot ?? defaultDockerRunRoot();
  const init = options.init ?? true;
  const armReader = options.armReader ?? true;
  return {
    backend: "docker",
    isolated: true,
    async create(create: SandboxCreateOptions): Promise<Sandbox> {
      const spec = RuntimeSpec.parse(create.spec);
      const sandboxId = `d-${randomBytes(6).toString("hex")}`;
      const hostRunDir = join(runRoot, create.labels.node_id, sandboxId);
      await mkdir(join(hostRunDir, EXEC_STATE_DIR), { recursive: true, mode: 0o755 });
      const plan = { sandboxId, spec, labels: create.labels, mounts: create.mounts ?? [], hostRunDir, init };
      let container: Docker.Container | undefined;
      try {
        container = await docker.createContainer(containerOptions(plan));
        await container.start();
      } catch (err) {
        await container?.remove({ force: true }).catch(() => undefined);
        await rm(hostRunDir, { recursive: true, force: true });
        throw dockerError(err, `create sandbox from ${spec.image}`);
      }
      const sandbox = new DockerSandbox(sandboxId, spec, hostRunDir, docker, container);
      if (armReader) await sandbox.arm();
      return sandbox;
    },
    async removeLeftovers(nodeId: string): Promise<number> {
      const leftovers = await docker
        .listContainers({ all: true, filters: { label: [`${LABEL_NODE_ID}=${nodeId}`] } })
        .catch((err) => {
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
