// Disk and process limits of process sandboxes under real bwrap, as root (a tmpfs and a pids
// cgroup per sandbox) and as an unprivileged user (rlimits set inside the namespaces): a sandbox
// that writes 200 MiB or starts 300 processes has its command fail at the limit, and nothing of
// it (mount, cgroup, processes, files) is left once it is destroyed.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findBwrap } from "./bwrap.ts";
import { hostPidsCgroupParent, pidsCgroupParent } from "./pids-cgroup.ts";
import { mountsUnder } from "./sandbox-tmpfs.ts";
import { testNeeding } from "../../../test/helpers/host-tools.ts";

const FIXTURE = join(import.meta.dir, "fixtures", "limits-attack.ts");
const BWRAP = findBwrap();
const REQUIRE = process.env.POLAR_REQUIRE_BWRAP === "1";
const ROOT_USER = process.getuid?.() === 0;
const SETPRIV = Bun.which("setpriv");
/** Whether uid 65534 can read the fixture: every folder above it must be searchable by others (a checkout under /root is not). */
const OTHERS_REACH_FIXTURE = FIXTURE.split("/")
  .slice(1, -1)
  .map((_, i, parts) => `/${parts.slice(0, i + 1).join("/")}`)
  .every((dir) => (statSync(dir).mode & 0o001) !== 0);
const root = mkdtempSync(join(tmpdir(), "polar-limits-"));
chmodSync(root, 0o777); // the unprivileged run writes its sandboxes here too
afterAll(() => rmSync(root, { recursive: true, force: true }));

const LIMITS = { pids: 64, diskMb: 64 };

interface AttackReport {
  uid: number;
  limits: { disk: string; pids: string; pidsLimit: number; diskMb: number; cgroupDir?: string; tmpfsAt?: string };
  filesWritten: number;
  filesMb: number;
  bigExit: number;
  bigMb: number;
  forked: number;
  forkErrno: number;
  warnings: string[];
}

async function attack(nodeId: string, asUser?: number): Promise<AttackReport> {
  const argv = [process.execPath, FIXTURE, root, nodeId, String(LIMITS.pids), String(LIMITS.diskMb)];
  const wrapped = asUser === undefined ? argv : [SETPRIV!, `--reuid=${asUser}`, `--regid=${asUser}`, "--clear-groups", ...argv];
  const child = Bun.spawn(wrapped, { cwd: root, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: root }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = [await new Response(child.stdout).text(), await new Response(child.stderr).text(), await child.exited];
  if (code !== 0) throw new Error(`fixture exited ${code}: ${err}`);
  return JSON.parse(out.trim().split("\n").at(-1)!) as AttackReport;
}

test("the pids cgroup parent: v1 pids under the node's own cgroup, v2 at its top when pids is available, else none", () => {
  const v1Info = "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw";
  expect(pidsCgroupParent("8:pids:/system.slice/polar.service\n0::/", v1Info, () => "")).toEqual({
    version: 1,
    dir: "/sys/fs/cgroup/pids/system.slice/polar.service",
  });
  expect(pidsCgroupParent("0::/user.slice/app.scope", "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw", () => "cpuset cpu io memory pids")).toEqual({
    version: 2,
    dir: "/sys/fs/cgroup",
  });
  expect(pidsCgroupParent("0::/", "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw", () => "memory")).toBeNull();
  // This machine's answer is one of those (or none): printed for the record.
  console.log(`pids cgroup parent here: ${JSON.stringify(hostPidsCgroupParent())}`);
});

const describeBwrap = BWRAP || REQUIRE ? describe : describe.skip;
if (!BWRAP && !REQUIRE) test.skip("process sandbox limits [SKIPPED: bwrap not installed — apt-get install bubblewrap]", () => {});

describeBwrap("process sandbox limits", () => {
  // As root the process limit is a pids cgroup; in a container with a read-only cgroup tree there is none.
  const asRoot = ROOT_USER ? testNeeding("pids_cgroup") : test.skip;
  asRoot(
    "as root: a tmpfs of disk_mb and a pids cgroup stop 200 MiB and 300 processes; nothing is left after destroy",
    async () => {
      const report = await attack("limits-root");
      expect(report.limits).toMatchObject({ disk: "tmpfs", pids: "cgroup", pidsLimit: LIMITS.pids, diskMb: LIMITS.diskMb });
      expect(report.warnings).toEqual([]);
      // 1 MiB files until the tmpfs is full: ENOSPC at the limit, not 200 MiB.
      expect(report.filesWritten).toBeLessThanOrEqual(LIMITS.diskMb);
      expect(report.filesMb).toBeLessThanOrEqual(LIMITS.diskMb);
      // One 200 MiB file: stopped at the limit too (ENOSPC: the shell's redirection fails).
      expect(report.bigExit).not.toBe(0);
      expect(report.bigMb).toBeLessThanOrEqual(LIMITS.diskMb);
      // Forks fail with EAGAIN before the cgroup's pids.max.
      expect(report.forkErrno).toBe(11);
      expect(report.forked).toBeGreaterThan(10);
      expect(report.forked).toBeLessThan(LIMITS.pids);
      expect(existsSync(report.limits.cgroupDir!)).toBe(false);
      expect(mountsUnder(join(root, "limits-root"))).toEqual([]);
      expect(readdirSync(join(root, "limits-root"))).toEqual([]);
    },
    240_000,
  );

  const asNobody =
    ROOT_USER && SETPRIV
      ? OTHERS_REACH_FIXTURE
        ? test
        : (name: string) => test.skip(`${name} [SKIPPED: uid 65534 cannot read ${FIXTURE} (a folder above it is closed to others)]`, () => {})
      : test.skip;
  asNobody(
    "unprivileged: RLIMIT_NPROC stops 300 processes, RLIMIT_FSIZE caps each file (many files are not limited), and it says so",
    async () => {
      const report = await attack("limits-nobody", 65534);
      expect(report.uid).toBe(65534);
      expect(report.limits).toMatchObject({ disk: "file_size", pids: "rlimit", pidsLimit: LIMITS.pids });
      expect(report.warnings.length).toBe(2);
      expect(report.warnings[0]).toContain("no disk limit beyond 64 MiB per file");
      expect(report.warnings[1]).toContain("RLIMIT_NPROC (64) limits each command");
      expect(report.bigExit).toBe(153); // SIGXFSZ from RLIMIT_FSIZE: exit 128 + 25
      expect(report.bigMb).toBeLessThanOrEqual(LIMITS.diskMb);
      expect(report.forkErrno).toBe(11);
      expect(report.forked).toBeLessThan(LIMITS.pids);
      expect(readdirSync(join(root, "limits-nobody"))).toEqual([]);
      // The gap, measured rather than assumed: 200 files of 1 MiB all fit (no per-sandbox quota).
      console.log(`unprivileged: ${report.filesWritten} files of 1 MiB written (${report.filesMb} MiB)`);
    },
    240_000,
  );
});

test("host pids cgroups of this test's sandboxes are gone", () => {
  const parent = hostPidsCgroupParent();
  const dir = parent ? join(parent.dir, "polar") : "";
  const left = dir && existsSync(dir) ? readdirSync(dir).filter((name) => name.startsWith("limits-root@") || name.startsWith("limits-nobody@")) : [];
  expect(left).toEqual([]);
});
