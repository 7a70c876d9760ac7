// Why: the one place that knows bubblewrap's command line: which host folders a process sandbox
// sees (a minimal read-only system), which namespaces it gets, and how its private root, run
// folder and extra mounts are laid out.
import { lstatSync, readlinkSync } from "node:fs";
import type { Mount } from "../types.ts";

export const BWRAP = "bwrap";

/** The host's bwrap, or null (the process runtime then runs unisolated and says so). */
export function findBwrap(): string | null {
  return Bun.which(BWRAP);
}

/** Top-level system folders: bound read-only, or re-created as the same symlinks (merged /usr). */
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
/** The /etc files programs need to start (loader cache, users, alternatives symlinks, certs). */
const ETC_ENTRIES = [
  "/etc/alternatives",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/passwd",
  "/etc/group",
  "/etc/nsswitch.conf",
  "/etc/hosts",
  "/etc/localtime",
  "/etc/ssl",
  "/etc/ca-certificates",
];

/**
 * /proc entries that reach the host kernel, covered as runc covers them: a sandbox that runs as
 * root (a node started as root; its user namespace maps 0 to 0) could otherwise write global
 * sysctls such as kernel.core_pattern — a way to run code as host root. bwrap itself covers
 * /proc/irq and /proc/bus only. Read-only: the host's own entries bound over the sandbox's.
 */
const PROC_READ_ONLY = ["/proc/sys", "/proc/sysrq-trigger", "/proc/fs"];
/** Hidden: an empty read-only folder or /dev/null over them. */
const PROC_MASKED = ["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list", "/proc/sched_debug", "/proc/scsi"];

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/**
 * The host's top-level symlinks (merged /usr: /bin -> usr/bin), to be created once in a
 * sandbox's root folder (bwrap's --symlink fails when the root already holds them).
 */
export function systemSymlinks(): { path: string; target: string }[] {
  return SYSTEM_DIRS.filter((dir) => lstatOrNull(dir)?.isSymbolicLink()).map((dir) => ({ path: dir, target: readlinkSync(dir) }));
}

function procCoverArgs(): string[] {
  const args: string[] = [];
  for (const entry of PROC_READ_ONLY) if (lstatOrNull(entry)) args.push("--ro-bind", entry, entry);
  for (const entry of PROC_MASKED) {
    const info = lstatOrNull(entry);
    if (info?.isDirectory()) args.push("--tmpfs", entry, "--remount-ro", entry);
    else if (info) args.push("--ro-bind", "/dev/null", entry);
  }
  return args;
}

function systemArgs(): string[] {
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) if (lstatOrNull(dir)?.isDirectory()) args.push("--ro-bind", dir, dir);
  for (const entry of ETC_ENTRIES) args.push("--ro-bind-try", entry, entry);
  return args;
}

/** Host folders (and mounts) a process sandbox is made of. */
export interface BwrapLayout {
  /** The sandbox's private root (holding systemSymlinks()): its work dir, /tmp, home and run folder live inside it. */
  rootDir: string;
  mounts: Mount[];
  network: "none" | "host";
  /** Capabilities kept (all others are dropped). */
  capAdd: string[];
}

export interface BwrapCommand {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
}

export function bwrapArgv(bwrap: string, layout: BwrapLayout, command: BwrapCommand): string[] {
  const args = [bwrap, "--bind", layout.rootDir, "/", ...systemArgs(), "--proc", "/proc", ...procCoverArgs(), "--dev", "/dev"];
  for (const mount of layout.mounts) args.push(mount.readonly ? "--ro-bind" : "--bind", mount.host, mount.sandbox);
  args.push("--unshare-all");
  if (layout.network === "host") args.push("--share-net");
  args.push("--die-with-parent", "--new-session", "--cap-drop", "ALL");
  for (const cap of layout.capAdd) args.push("--cap-add", cap.startsWith("CAP_") ? cap : `CAP_${cap.toUpperCase()}`);
  args.push("--chdir", command.cwd, "--clearenv");
  for (const [name, value] of Object.entries(command.env)) args.push("--setenv", name, value);
  args.push("--", ...command.argv);
  return args;
}
