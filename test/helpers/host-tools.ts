// Why: tests that run the bundled tasks in process sandboxes need host programs a fresh machine
// may lack (bwrap; python3 with pytest, which sandboxes see through the host's /usr); without
// them the tests skip visibly, naming the missing piece and how to get it — and CI, which
// installs them, sets POLAR_REQUIRE_BWRAP=1 / POLAR_REQUIRE_PYTEST=1 so a skip becomes a failure.
// A pids cgroup the node can create (root on a host, not a container with a read-only
// /sys/fs/cgroup) is what the process-limit tests need as root: POLAR_REQUIRE_PIDS_CGROUP=1.
import { test } from "bun:test";
import { mkdirSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { hostPidsCgroupParent } from "../../node/runtime/process/pids-cgroup.ts";

/** The PATH process sandboxes see (the host's system folders, never a user's pyenv). */
const SANDBOX_SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export type HostTool = "bwrap" | "pytest" | "pids_cgroup";

const REQUIRE: Record<HostTool, string> = { bwrap: "POLAR_REQUIRE_BWRAP", pytest: "POLAR_REQUIRE_PYTEST", pids_cgroup: "POLAR_REQUIRE_PIDS_CGROUP" };

function present(argv: string[]): boolean {
  try {
    return Bun.spawnSync(argv, { env: { PATH: SANDBOX_SYSTEM_PATH }, stdout: "ignore", stderr: "ignore" }).exitCode === 0;
  } catch {
    return false;
  }
}

/** Why this process cannot create a pids cgroup (what the process runtime does per sandbox as root), or null. */
function pidsCgroupMissing(): string | null {
  const parent = hostPidsCgroupParent();
  if (!parent) return "no pids cgroup controller is mounted here";
  const probe = join(parent.dir, `polar-test-probe-${process.pid}`);
  try {
    mkdirSync(probe);
    rmdirSync(probe);
    return null;
  } catch (err) {
    return `no pids cgroup can be created under ${parent.dir} (${(err as NodeJS.ErrnoException).code}): run as root on a host, or in a container with a delegated cgroup`;
  }
}

const missing: Record<HostTool, () => string | null> = {
  bwrap: () => (Bun.which("bwrap") ? null : "bwrap not installed — bash scripts/setup.sh (as root) or apt-get install bubblewrap"),
  pytest: () =>
    present(["/bin/sh", "-c", "python3 -c 'import pytest'"])
      ? null
      : "pytest for the system python3 not installed — bash scripts/setup.sh (as root) or apt-get install python3-pytest",
  pids_cgroup: pidsCgroupMissing,
};

/** Why `tool` is missing on this host (the sandbox's view), or null when it is there. */
export function hostToolMissing(tool: HostTool): string | null {
  return missing[tool]();
}

/** Whether CI demands `tool` (POLAR_REQUIRE_…=1): its tests then run, and fail, without it. */
export function required(tool: HostTool): boolean {
  return process.env[REQUIRE[tool]] === "1";
}

/**
 * `test`, or — when one of `tools` is missing and not required — a `test` that registers each
 * case as skipped with the missing piece in its name.
 */
/** Why the tools that are not required are missing (empty when all are there, or required). */
export function missingTools(...tools: HostTool[]): string[] {
  return tools
    .filter((t) => !required(t))
    .map(hostToolMissing)
    .filter((r): r is string => r !== null);
}

export function testNeeding(...tools: HostTool[]): TestFn {
  const reasons = missingTools(...tools);
  if (reasons.length === 0) return (name, fn, timeoutMs) => test(name, fn, timeoutMs);
  return (name) => test.skip(`${name} [SKIPPED: ${reasons.join("; ")}]`, () => {});
}

export type TestFn = (name: string, fn: () => void | Promise<unknown>, timeoutMs?: number) => void;
