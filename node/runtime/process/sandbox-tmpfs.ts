// Why: a process sandbox writes into a host folder, and nothing in bwrap bounds how much; when
// the node may mount (root or CAP_SYS_ADMIN), that folder is a tmpfs of the configured size, so
// a sandbox that fills it gets ENOSPC while the host's disk is untouched. tmpfs lives in memory
// (swappable): its pages count against the machine's RAM only as far as they are written.
import { readFileSync } from "node:fs";
import { spawnCapture } from "./spawn-capture.ts";

const MOUNT_ENV = { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" };
/** Inodes per MiB of size: empty files cost memory too, so their number is bounded with the size. */
const INODES_PER_MIB = 256;
const MIN_INODES = 16_384;

/** Mounts a size-limited tmpfs on `dir` (an existing empty folder); throws with mount's message when the node may not. */
export async function mountSandboxTmpfs(dir: string, sizeMb: number): Promise<void> {
  const inodes = Math.max(MIN_INODES, sizeMb * INODES_PER_MIB);
  const result = await spawnCapture({
    argv: ["mount", "-t", "tmpfs", "-o", `size=${sizeMb}m,nr_inodes=${inodes},mode=0755,nosuid,nodev`, "polar-sandbox", dir],
    cwd: "/",
    env: MOUNT_ENV,
    timeoutMs: 30_000,
  });
  if (result.exitCode !== 0) throw new Error(result.stderr.bytes.toString("utf8").trim().split("\n")[0] || `mount exited with ${result.exitCode}`);
}

/** Detaches the tmpfs at `dir` (lazily: a process still exiting cannot keep it busy); no-op when none is mounted. */
export async function unmountSandboxTmpfs(dir: string): Promise<void> {
  if (!mountedAt(dir)) return;
  const result = await spawnCapture({ argv: ["umount", "-l", dir], cwd: "/", env: MOUNT_ENV, timeoutMs: 30_000 });
  if (result.exitCode !== 0 && mountedAt(dir)) throw new Error(`umount ${dir}: ${result.stderr.bytes.toString("utf8").trim()}`);
}

/** Mount points at or below `dir` (from /proc/self/mountinfo), deepest first. */
export function mountsUnder(dir: string): string[] {
  let info = "";
  try {
    info = readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return [];
  }
  const points = info
    .split("\n")
    .map((line) => (line.split(" ")[4] ?? "").replace(/\\040/g, " "))
    .filter((point) => point === dir || point.startsWith(`${dir}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

function mountedAt(dir: string): boolean {
  return mountsUnder(dir).includes(dir);
}
