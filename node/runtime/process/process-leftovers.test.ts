// A node killed with SIGKILL while its process sandboxes run: under bwrap nothing outlives it
// (--die-with-parent); unisolated, its processes survive until the restarted node's
// removeLeftovers kills them. Either way the restart removes the work dirs.
import { afterAll, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findBwrap } from "./bwrap.ts";
import { hostPidsCgroupParent } from "./pids-cgroup.ts";
import { hostToolMissing } from "../../../test/helpers/host-tools.ts";
import { createProcessRuntime } from "./process.ts";
import { mountsUnder } from "./sandbox-tmpfs.ts";

const root = await mkdtemp(join(tmpdir(), "polar-proc-kill-"));
afterAll(() => rm(root, { recursive: true, force: true }));
const FIXTURE = join(import.meta.dir, "fixtures", "process-node.ts");

async function sleepers(arg: string): Promise<number> {
  let count = 0;
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    if (cmdline === `sleep\0${arg}\0` && stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z") count++;
  }
  return count;
}

async function until(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await Bun.sleep(100);
  }
  return check();
}

async function startAndKill(nodeId: string, mode: "bwrap" | "none", sleepArg: string): Promise<void> {
  const child = Bun.spawn([process.execPath, FIXTURE, root, nodeId, mode, sleepArg], { stdout: "pipe", stderr: "inherit" });
  const reader = child.stdout.getReader();
  let out = "";
  while (!out.includes("ready")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`fixture exited early: ${out}`);
    out += new TextDecoder().decode(value);
  }
  expect(await until(async () => (await sleepers(sleepArg)) === 2, 10_000)).toBe(true);
  child.kill("SIGKILL");
  await child.exited;
}

const withBwrap = findBwrap() || process.env.POLAR_REQUIRE_BWRAP === "1" ? test : test.skip;
/** Sandbox cgroups left under a node id (none where the node cannot make cgroups). */
function leftoverCgroups(nodeId: string): string[] {
  const parent = hostPidsCgroupParent();
  const dir = parent ? join(parent.dir, "polar") : "";
  return dir && existsSync(dir) ? readdirSync(dir).filter((name) => name.startsWith(`${nodeId}@`)) : [];
}

withBwrap(
  "under bwrap, a SIGKILLed node's sandbox processes die with it; the restart removes its dirs, tmpfs mounts and cgroups",
  async () => {
    await startAndKill("killed-bwrap", "bwrap", "4251.5");
    expect(await until(async () => (await sleepers("4251.5")) === 0, 10_000)).toBe(true);
    if (process.getuid?.() === 0) {
      // As root the crashed node's sandbox had a tmpfs and a pids cgroup, which outlive it.
      expect(mountsUnder(join(root, "killed-bwrap")).length).toBe(1);
      expect(leftoverCgroups("killed-bwrap").length).toBe(hostToolMissing("pids_cgroup") === null ? 1 : 0);
    }
    expect(await createProcessRuntime({ root, warn: () => {} }).removeLeftovers("killed-bwrap")).toBe(1);
    expect(await readdir(join(root, "killed-bwrap"))).toEqual([]);
    expect(mountsUnder(join(root, "killed-bwrap"))).toEqual([]);
    expect(leftoverCgroups("killed-bwrap")).toEqual([]);
  },
  60_000,
);

test("unisolated, the restarted node's removeLeftovers kills what survived and removes its dirs", async () => {
  await startAndKill("killed-plain", "none", "4252.5");
  expect(await sleepers("4252.5")).toBe(2); // detached: they outlive the node
  expect(await createProcessRuntime({ root, bwrap: null, warn: () => {} }).removeLeftovers("killed-plain")).toBe(1);
  expect(await until(async () => (await sleepers("4252.5")) === 0, 10_000)).toBe(true);
  expect(existsSync(join(root, "killed-plain"))).toBe(true);
  expect(await readdir(join(root, "killed-plain"))).toEqual([]);
}, 60_000);
