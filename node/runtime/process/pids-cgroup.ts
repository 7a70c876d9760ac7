// Why: a process limit that holds whoever the sandbox runs as (RLIMIT_NPROC does not bind root)
// and counts everything a sandbox starts, background children of every command included, is a
// pids cgroup. When the node may create one (root, or a writable cgroup tree) each process
// sandbox gets `polar/<node id>@<sandbox id>` under the pids hierarchy (flat: destroying the last
// sandbox leaves nothing per node behind; node ids cannot hold '@'); its bwrap readers join it
// before they exec bwrap, and destroy kills what is left in it and removes it.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** Where the node makes its sandboxes' cgroups: a v1 pids hierarchy, or cgroup v2 with pids enabled. */
export interface PidsCgroupParent {
  version: 1 | 2;
  /** The folder `polar/` is created in. */
  dir: string;
}

interface CgroupMount {
  root: string;
  mountPoint: string;
  fsType: string;
  superOptions: string[];
}

function mounts(mountinfo: string): CgroupMount[] {
  const found: CgroupMount[] = [];
  for (const line of mountinfo.split("\n")) {
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const fields = left.split(" ");
    const [fsType, , options] = right.split(" ");
    if (fsType !== "cgroup" && fsType !== "cgroup2") continue;
    found.push({ root: fields[3] ?? "/", mountPoint: (fields[4] ?? "").replace(/\\040/g, " "), fsType, superOptions: (options ?? "").split(",") });
  }
  return found;
}

/**
 * The parent folder for sandbox cgroups, from /proc/self/cgroup and /proc/self/mountinfo (pure):
 * under the node's own v1 pids cgroup (a service's own pids limit then covers its sandboxes), or
 * at the top of a v2 tree whose controllers include pids (v2 forbids controllers below a cgroup
 * that holds processes, such as the node's own). Null: no pids controller is mounted.
 */
export function pidsCgroupParent(procSelfCgroup: string, mountinfo: string, v2Controllers: (mountPoint: string) => string): PidsCgroupParent | null {
  const all = mounts(mountinfo);
  const v1 = all.find((m) => m.fsType === "cgroup" && m.superOptions.includes("pids"));
  if (v1) {
    const line = procSelfCgroup.split("\n").find((l) => l.split(":")[1]?.split(",").includes("pids"));
    const own = line?.slice(line.indexOf(":", line.indexOf(":") + 1) + 1) ?? "/";
    const below = own.startsWith(v1.root) ? own.slice(v1.root.length) : "";
    return { version: 1, dir: join(v1.mountPoint, below) };
  }
  const v2 = all.find((m) => m.fsType === "cgroup2");
  if (v2 && v2Controllers(v2.mountPoint).split(/\s+/).includes("pids")) return { version: 2, dir: v2.mountPoint };
  return null;
}

/** The parent on this machine, or null. */
export function hostPidsCgroupParent(): PidsCgroupParent | null {
  const read = (path: string) => {
    try {
      return readFileSync(path, "utf8");
    } catch {
      return "";
    }
  };
  return pidsCgroupParent(read("/proc/self/cgroup"), read("/proc/self/mountinfo"), (mountPoint) => read(join(mountPoint, "cgroup.controllers")));
}

/** Enables the pids controller for a v2 cgroup's children (no-op when it already is). */
async function enablePids(dir: string): Promise<void> {
  const control = join(dir, "cgroup.subtree_control");
  if ((await readFile(control, "utf8")).split(/\s+/).includes("pids")) return;
  await writeFile(control, "+pids");
}

/** Kills every process in a cgroup (host pids) with SIGKILL. */
function killMembers(dir: string): number {
  let members: number[] = [];
  try {
    members = readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return 0;
  }
  for (const pid of members) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  return members.length;
}

/** Kills what is left in a sandbox cgroup and removes it (retrying while the killed exit). */
export async function removePidsCgroup(dir: string): Promise<void> {
  for (let attempt = 0; existsSync(dir); attempt++) {
    killMembers(dir);
    try {
      await rmdir(dir);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return;
      if (code !== "EBUSY" || attempt >= 100) throw err;
      await Bun.sleep(20);
    }
  }
}

export class PidsCgroups {
  constructor(private readonly parent: PidsCgroupParent) {}

  private get polarDir(): string {
    return join(this.parent.dir, "polar");
  }

  /** Creates the sandbox's cgroup with its pids.max; returns its folder (throws when the node may not). */
  async create(nodeId: string, sandboxId: string, maxPids: number): Promise<string> {
    if (this.parent.version === 2) await enablePids(this.parent.dir);
    await mkdir(this.polarDir, { recursive: true });
    if (this.parent.version === 2) await enablePids(this.polarDir);
    const dir = join(this.polarDir, `${nodeId}@${sandboxId}`);
    await mkdir(dir);
    try {
      await writeFile(join(dir, "pids.max"), String(maxPids));
    } catch (err) {
      await rmdir(dir).catch(() => undefined);
      throw err;
    }
    return dir;
  }

  /** Removes every sandbox cgroup of a node (leftovers of an earlier life), killing their processes. */
  async removeNode(nodeId: string): Promise<number> {
    let names: string[] = [];
    try {
      names = readdirSync(this.polarDir, { withFileTypes: true })
        .filter((e) => e.isDirectory() && e.name.startsWith(`${nodeId}@`))
        .map((e) => e.name);
    } catch {
      return 0;
    }
    for (const name of names) await removePidsCgroup(join(this.polarDir, name));
    return names.length;
  }
}

/**
 * argv that moves itself into the cgroup, then execs `argv` there: everything it starts is
 * counted from its first fork (a pid written after spawn would race the first children).
 */
export function inCgroupArgv(cgroupDir: string, argv: string[]): string[] {
  return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', join(cgroupDir, "cgroup.procs"), ...argv];
}
