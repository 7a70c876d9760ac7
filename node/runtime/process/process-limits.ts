// Why: bwrap isolates but does not bound; a process sandbox gets its disk and process limits here,
// with whatever this host lets the node do, and says once what it could not:
// - disk: a tmpfs of `diskMb` on the sandbox's root folder when the node may mount (root), else
//   only RLIMIT_FSIZE (no single file larger than the limit; many files can still fill the disk);
// - processes: a pids cgroup per sandbox when the node may create one (root, a writable tree),
//   else RLIMIT_NPROC inside each bwrap's own user namespace (per command; root ignores it).
// The rlimits are set inside the namespaces by prlimit (hard = soft), so a command cannot raise
// them back; they are left out where they would add nothing (a tmpfs, root).
import { PidsCgroups, hostPidsCgroupParent, inCgroupArgv, removePidsCgroup } from "./pids-cgroup.ts";
import { effectivePidsLimit, type SandboxLimits } from "../sandbox-limits.ts";
import { mountSandboxTmpfs, mountsUnder, unmountSandboxTmpfs } from "./sandbox-tmpfs.ts";
import type { RuntimeSpec } from "../types.ts";

export type DiskLimitMode = "tmpfs" | "file_size";
export type PidsLimitMode = "cgroup" | "rlimit" | "none";

/** What holds one sandbox. */
export interface LimitsInForce {
  disk: DiskLimitMode;
  pids: PidsLimitMode;
  pidsLimit: number;
  diskMb: number;
  /** The sandbox's cgroup folder (pids "cgroup"). */
  cgroupDir?: string;
  /** Whether its root folder is a tmpfs the limiter mounted. */
  tmpfsAt?: string;
}

export interface ProcessLimiterOptions {
  limits: SandboxLimits;
  warn: (message: string) => void;
  /** Host prlimit (util-linux); default: on PATH. Null: no rlimits. */
  prlimit?: string | null;
  /** Whether the node runs as root (RLIMIT_NPROC does not bind it); default from the process. */
  root?: boolean;
}

export class ProcessLimiter {
  private readonly cgroups: PidsCgroups | null;
  private readonly prlimit: string | null;
  private readonly root: boolean;
  private tmpfsWorks = true;
  private cgroupWorks: boolean;
  private readonly warned = new Set<string>();

  constructor(private readonly options: ProcessLimiterOptions) {
    const parent = hostPidsCgroupParent();
    this.cgroups = parent ? new PidsCgroups(parent) : null;
    this.cgroupWorks = this.cgroups !== null;
    this.prlimit = options.prlimit === undefined ? Bun.which("prlimit") : options.prlimit;
    this.root = options.root ?? process.getuid?.() === 0;
  }

  private warnOnce(key: string, message: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.options.warn(message);
  }

  /** Mounts the root folder's tmpfs and creates the cgroup, as far as the host allows. `rootDir` must exist and be empty. */
  async setUp(nodeId: string, sandboxId: string, rootDir: string, spec: Pick<RuntimeSpec, "pids_limit">): Promise<LimitsInForce> {
    const { diskMb } = this.options.limits;
    const pidsLimit = effectivePidsLimit(spec, this.options.limits);
    const inForce: LimitsInForce = { disk: "file_size", pids: this.root ? "none" : "rlimit", pidsLimit, diskMb };
    if (this.tmpfsWorks) {
      try {
        await mountSandboxTmpfs(rootDir, diskMb);
        inForce.disk = "tmpfs";
        inForce.tmpfsAt = rootDir;
      } catch (err) {
        this.tmpfsWorks = false;
        this.warnOnce(
          "tmpfs",
          `polar process sandboxes: no disk limit beyond ${diskMb} MiB per file — a tmpfs cannot be mounted here (${(err as Error).message}); run the node as root for a ${diskMb} MiB tmpfs per sandbox`,
        );
      }
    }
    if (this.cgroups && this.cgroupWorks) {
      try {
        inForce.cgroupDir = await this.cgroups.create(nodeId, sandboxId, pidsLimit);
        inForce.pids = "cgroup";
      } catch (err) {
        this.cgroupWorks = false;
        this.warnOnce(
          "cgroup",
          `polar process sandboxes: no pids cgroup (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})${this.root ? "; the node runs as root, so RLIMIT_NPROC does not bind and sandboxes have NO process limit" : `; RLIMIT_NPROC (${pidsLimit}) limits each command instead`}`,
        );
      }
    } else if (!this.cgroups && this.root) {
      this.warnOnce("cgroup", "polar process sandboxes: no pids cgroup controller is mounted and the node runs as root, so sandboxes have NO process limit");
    }
    if (!this.prlimit)
      this.warnOnce("prlimit", "polar process sandboxes: prlimit (util-linux) is not installed, so no per-file or per-command process rlimit is set");
    return inForce;
  }

  /** The reader's outer argv (joins the cgroup first) around the bwrap argv. */
  outer(inForce: LimitsInForce, argv: string[]): string[] {
    return inForce.cgroupDir ? inCgroupArgv(inForce.cgroupDir, argv) : argv;
  }

  /**
   * The prefix run inside the namespaces before the reader shell: prlimit with both limits (hard =
   * soft). None when the rlimits would add nothing: a tmpfs bounds every file, and root ignores
   * RLIMIT_NPROC (saves an exec per reader).
   */
  inner(inForce: LimitsInForce): string[] {
    if (!this.prlimit) return [];
    if (inForce.disk === "tmpfs" && (inForce.pids === "cgroup" || this.root)) return [];
    const fileBytes = inForce.diskMb * 1024 * 1024;
    return [this.prlimit, `--nproc=${inForce.pidsLimit}`, `--fsize=${fileBytes}`, "--"];
  }

  /** Removes the cgroup (killing what is left in it) and the tmpfs; call once the sandbox's processes are gone. */
  async tearDown(inForce: LimitsInForce): Promise<void> {
    if (inForce.cgroupDir) await removePidsCgroup(inForce.cgroupDir);
    if (inForce.tmpfsAt) await unmountSandboxTmpfs(inForce.tmpfsAt);
  }

  /** What a crashed earlier life left: its sandboxes' cgroups (their processes killed) and tmpfs mounts under `nodeDir`. */
  async removeLeftovers(nodeId: string, nodeDir: string): Promise<void> {
    await this.cgroups?.removeNode(nodeId);
    for (const point of mountsUnder(nodeDir)) await unmountSandboxTmpfs(point);
  }
}
