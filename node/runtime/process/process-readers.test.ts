// The bwrap readers of the process runtime: commands run on a bwrap started ahead of them (seen
// from the command's own start time, earlier than a host process started just before the exec),
// used readers are replaced once the sandbox is idle, a reader killed from outside is replaced,
// and destroy leaves no process behind.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PolarError } from "../../../protocol/errors.ts";
import { findBwrap } from "./bwrap.ts";
import { createProcessRuntime } from "./process.ts";
import { RuntimeSpec, type Sandbox } from "../types.ts";

const root = await mkdtemp(join(tmpdir(), "polar-proc-readers-"));
const runtime = createProcessRuntime({ root, warn: () => {} });
const sandboxes: Sandbox[] = [];
afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.destroy()));
  await rm(root, { recursive: true, force: true });
});

async function make(): Promise<Sandbox> {
  const sandbox = await runtime.create({ spec: RuntimeSpec.parse({ env: { TASK_VAR: "from-spec" } }), labels: { node_id: "readers" } });
  sandboxes.push(sandbox);
  return sandbox;
}

/** The sandbox's folder: what its host processes carry in POLAR_PROCESS_SANDBOX. */
function sandboxDir(sandbox: Sandbox): string {
  return join(sandbox.hostRunDir, "..", "..", "..");
}

interface HostProcess {
  pid: number;
  ppid: number;
  cmdline: string;
  environ: string[];
}

/** Live (not zombie) host processes. */
async function hostProcesses(): Promise<HostProcess[]> {
  const found: HostProcess[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "latin1").catch(() => "");
    const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (!stat || state === "Z") continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "latin1").catch(() => "");
    const environ = await readFile(`/proc/${entry}/environ`, "latin1").catch(() => "");
    found.push({ pid: Number(entry), ppid: Number(ppid), cmdline: cmdline.replaceAll("\0", " ").trim(), environ: environ.split("\0") });
  }
  return found;
}

/** Host processes marked with this sandbox's folder (the readers' bwraps). */
async function markedPids(sandbox: Sandbox): Promise<number[]> {
  const marker = `POLAR_PROCESS_SANDBOX=${sandboxDir(sandbox)}`;
  return (await hostProcesses()).filter((p) => p.environ.includes(marker)).map((p) => p.pid);
}

/** Reader shells of this sandbox waiting for a job (children of its bwraps, still reading). */
async function armedReaders(sandbox: Sandbox): Promise<number> {
  const marker = `POLAR_PROCESS_SANDBOX=${sandboxDir(sandbox)}`;
  const all = await hostProcesses();
  const bwraps = new Set(all.filter((p) => p.environ.includes(marker)).map((p) => p.pid));
  return all.filter((p) => bwraps.has(p.ppid) && p.cmdline.startsWith("/bin/sh -c printf R")).length;
}

async function sleepers(arg: string): Promise<number> {
  return (await hostProcesses()).filter((p) => p.cmdline === `sleep ${arg}`).length;
}

async function until(check: () => Promise<boolean>, ms = 20_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await Bun.sleep(50);
  }
  return check();
}

/** Start time (clock ticks since boot) of a host process started now. */
async function hostTicksNow(): Promise<number> {
  const probe = Bun.spawn(["cut", "-d", " ", "-f", "22", "/proc/self/stat"], { stdout: "pipe" });
  return Number((await new Response(probe.stdout).text()).trim());
}

/** Runs a command that prints its own start time first, then what `script` prints. */
async function probe(sandbox: Sandbox, script = "true", options: { cwd?: string; env?: Record<string, string>; stdin?: string } = {}) {
  const result = await sandbox.exec({ command: `cut -d' ' -f22 /proc/$$/stat; ${script}`, timeoutMs: 30_000, ...options });
  expect(result.exit_code).toBe(0);
  const [started, ...rest] = result.stdout.split("\n");
  return { started: Number(started), output: rest.join("\n") };
}

const describeBwrap = findBwrap() || process.env.POLAR_REQUIRE_BWRAP === "1" ? describe : describe.skip;

describeBwrap("bwrap readers", () => {
  test("a command runs on a reader armed at create and sees its cwd, env and stdin", async () => {
    const sandbox = await make();
    expect(await armedReaders(sandbox)).toBe(2); // ready before create returned
    await Bun.sleep(100); // several clock ticks between the readers' start and the marker below
    const before = await hostTicksNow();
    const run = await probe(sandbox, 'pwd; echo "$EXTRA|$TASK_VAR"; cat', { cwd: "/tmp", env: { EXTRA: "it's  two\nlines" }, stdin: "piped in" });
    expect(run.started).toBeLessThan(before);
    expect(run.output).toBe("/tmp\nit's  two\nlines|from-spec\npiped in");
    await expect(sandbox.exec({ command: "true", env: { "BAD-NAME": "x" } })).rejects.toThrow(PolarError);
    const missing = await sandbox.exec({ command: "true", cwd: "/no/such/dir" });
    expect(missing.exit_code).toBe(1);
    expect(missing.stderr).toContain("/no/such/dir");
  }, 60_000);

  test("a timeout kills the command; the used reader is replaced once the sandbox is idle", async () => {
    const sandbox = await make();
    const beforeTimeout = await hostTicksNow();
    const timed = await sandbox.exec({ command: "sleep 4261.5 & sleep 4261.5", timeoutMs: 1000 });
    expect(timed).toMatchObject({ timed_out: true, exit_code: null });
    expect(await until(async () => (await sleepers("4261.5")) === 0)).toBe(true);
    expect(await until(async () => (await armedReaders(sandbox)) === 2)).toBe(true);
    await Bun.sleep(100);
    const beforeRuns = await hostTicksNow();
    const [first, second] = await Promise.all([probe(sandbox, "echo one"), probe(sandbox, "echo two")]);
    expect([first.output, second.output]).toEqual(["one\n", "two\n"]);
    // Both ran on armed readers; one of them is the replacement, started after the timed-out command.
    expect(Math.max(first.started, second.started)).toBeLessThan(beforeRuns);
    expect(Math.max(first.started, second.started)).toBeGreaterThanOrEqual(beforeTimeout);
  }, 60_000);

  test("readers killed from outside are replaced by the next command", async () => {
    const sandbox = await make();
    const pids = await markedPids(sandbox);
    for (const pid of pids) process.kill(pid, "SIGKILL");
    expect(await until(async () => (await markedPids(sandbox)).length === 0)).toBe(true);
    expect(await sandbox.alive()).toBe(true);
    const result = await sandbox.exec({ command: "echo still here", timeoutMs: 30_000 });
    expect(result).toMatchObject({ exit_code: 0, stdout: "still here\n" });
    expect(await until(async () => (await armedReaders(sandbox)) === 2)).toBe(true); // re-armed once idle
  }, 60_000);

  test("destroy kills the armed and the running readers", async () => {
    const sandbox = await make();
    const running = sandbox.exec({ command: "sleep 4262.5" });
    expect(await until(async () => (await sleepers("4262.5")) === 1)).toBe(true);
    expect(await armedReaders(sandbox)).toBe(1);
    await sandbox.destroy();
    expect((await running).exit_code).toBeNull();
    expect(await until(async () => (await markedPids(sandbox)).length === 0 && (await sleepers("4262.5")) === 0)).toBe(true);
    await expect(sandbox.exec({ command: "true" })).rejects.toThrow(PolarError);
  }, 60_000);
});
