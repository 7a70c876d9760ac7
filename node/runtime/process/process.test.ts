// The process runtime under real bubblewrap (and without it): commands, files, namespaces,
// timeouts that kill the whole tree, and leftovers removed after a crash.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PolarError } from "../../../protocol/errors.ts";
import { findBwrap } from "./bwrap.ts";
import { createProcessRuntime } from "./process.ts";
import { RuntimeSpec, type Sandbox, type SandboxRuntime } from "../types.ts";

const BWRAP = findBwrap();
const REQUIRE = process.env.POLAR_REQUIRE_BWRAP === "1";
const root = await mkdtemp(join(tmpdir(), "polar-proc-test-"));
const NODE_ID = "node-test";
const sandboxes: Sandbox[] = [];
afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.destroy()));
  await rm(root, { recursive: true, force: true });
});

async function make(runtime: SandboxRuntime, spec: Partial<RuntimeSpec> = {}, mounts = [] as { host: string; sandbox: string; readonly: boolean }[]) {
  const sandbox = await runtime.create({ spec: RuntimeSpec.parse(spec), labels: { node_id: NODE_ID }, mounts });
  sandboxes.push(sandbox);
  return sandbox;
}

/** Host pids whose command line is exactly `argv` (to see what a kill left behind). */
async function hostProcesses(argv: string[]): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    if (cmdline === `${argv.join("\0")}\0` && state !== "Z") found.push(Number(entry));
  }
  return found;
}

const describeBwrap = BWRAP || REQUIRE ? describe : describe.skip;
if (!BWRAP && !REQUIRE) test.skip("process runtime under bwrap [SKIPPED: bwrap not installed — apt-get install bubblewrap]", () => {});

describeBwrap("process runtime under bwrap", () => {
  const runtime = createProcessRuntime({ root, warn: () => {} });

  test("is isolated", () => {
    expect(BWRAP).not.toBeNull();
    expect(runtime.isolated).toBe(true);
    expect(runtime.backend).toBe("process");
  });

  test("exec: argv, shell string, cwd, stdin, env not inherited", async () => {
    const sandbox = await make(runtime, { env: { TASK_VAR: "from-spec" } });
    const argv = await sandbox.exec({ command: ["pwd"] });
    expect(argv.exit_code).toBe(0);
    expect(argv.stdout.trim()).toBe("/work");
    process.env.POLAR_PROCESS_TEST_SECRET = "leak";
    const env = await sandbox.exec({ command: "env", env: { EXTRA: "1" } });
    delete process.env.POLAR_PROCESS_TEST_SECRET;
    const vars = new Map(
      env.stdout
        .trim()
        .split("\n")
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    expect(vars.has("POLAR_PROCESS_TEST_SECRET")).toBe(false);
    expect(vars.has("POLAR_PROCESS_SANDBOX")).toBe(false);
    expect(vars.get("TASK_VAR")).toBe("from-spec");
    expect(vars.get("EXTRA")).toBe("1");
    expect(vars.get("HOME")).toBe("/root");
    const stdin = await sandbox.exec({ command: "tr a-z A-Z", stdin: "hello" });
    expect(stdin.stdout).toBe("HELLO");
    const closed = await sandbox.exec({ command: "cat; echo done" });
    expect(closed.stdout).toBe("done\n");
    const failing = await sandbox.exec({ command: "echo oops >&2; exit 7", cwd: "/tmp" });
    expect(failing).toMatchObject({ exit_code: 7, stderr: "oops\n", timed_out: false });
  }, 30_000);

  test("output capture is bounded and the rest counted", async () => {
    const sandbox = await make(runtime);
    const result = await sandbox.exec({ command: "head -c 100000 /dev/zero; head -c 5000 /dev/zero >&2", maxOutputBytes: 1000 });
    expect(result.stdout.length).toBe(1000);
    expect(result.stdout_dropped_bytes).toBe(99_000);
    expect(result.stderr_dropped_bytes).toBe(4_000);
  }, 30_000);

  test("files: put, read, directories and archives, paths mapped into the work dir", async () => {
    const sandbox = await make(runtime);
    await sandbox.putFiles({ "/work/repo/a.txt": "alpha", "/work/repo/sub/b.bin": new Uint8Array([0, 1, 2]) });
    await sandbox.putFiles({ "/work/run.sh": "#!/bin/sh\necho ran\n" }, { mode: 0o755 });
    expect((await sandbox.exec({ command: "cat repo/a.txt && ./run.sh" })).stdout).toBe("alpharan\n");
    expect(Array.from(await sandbox.readFile("/work/repo/sub/b.bin"))).toEqual([0, 1, 2]);
    await sandbox.exec({ command: "echo made-inside > /work/repo/inside.txt" });
    expect(new TextDecoder().decode(await sandbox.readFile("/work/repo/inside.txt"))).toBe("made-inside\n");

    const hostDir = join(root, "upload");
    await mkdir(join(hostDir, "pkg"), { recursive: true });
    await writeFile(join(hostDir, "pkg", "mod.py"), "print('hi')\n");
    await sandbox.putDirectory(hostDir, "/work/uploaded");
    expect((await sandbox.exec({ command: "cat /work/uploaded/pkg/mod.py" })).stdout).toBe("print('hi')\n");

    const archive = await sandbox.getArchive("/work/repo");
    const other = await make(runtime);
    await other.putArchive(archive, "/work/copy");
    const listed = await other.exec({ command: "cd /work/copy && find . -type f | sort && cat repo/a.txt" });
    expect(listed.stdout).toBe("./repo/a.txt\n./repo/inside.txt\n./repo/sub/b.bin\nalpha");
    await expect(sandbox.readFile("/work/missing.txt")).rejects.toThrow(PolarError);
  }, 60_000);

  test("paths and symlinks cannot escape the sandbox", async () => {
    const sandbox = await make(runtime);
    await sandbox.putFiles({ "relative.txt": "in the workdir" }); // as in Polar's task files
    expect((await sandbox.exec({ command: "cat /work/relative.txt" })).stdout).toBe("in the workdir");
    await sandbox.putFiles({ "/work/../../../../etc/polar-escape-test": "stays inside" });
    expect(existsSync("/etc/polar-escape-test")).toBe(false);
    expect((await sandbox.exec({ command: "cat /etc/polar-escape-test" })).stdout).toBe("stays inside");
    // A symlink planted by the sandboxed code must not lead a host-side write outside.
    const target = join(root, "outside");
    await mkdir(target, { recursive: true });
    await sandbox.exec({ command: `ln -s ${target} /work/evil` });
    await expect(sandbox.putFiles({ "/work/evil/pwned.txt": "x" })).rejects.toThrow(PolarError);
    expect(existsSync(join(target, "pwned.txt"))).toBe(false);
    // Reads and archives resolve inside the namespaces, where the host folder does not exist.
    await writeFile(join(target, "secret.txt"), "host secret");
    await expect(sandbox.readFile("/work/evil/secret.txt")).rejects.toThrow(PolarError);
    // The host system is read-only.
    const write = await sandbox.exec({ command: "touch /usr/polar-test 2>&1; echo rc=$?" });
    expect(write.stdout).toContain("rc=1");
  }, 30_000);

  test("network namespace: only lo, no route, host listeners unreachable", async () => {
    const sandbox = await make(runtime);
    const dev = await sandbox.exec({ command: "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '" });
    expect(dev.stdout.trim().split("\n")).toEqual(["lo"]);
    const routes = await sandbox.exec({ command: "tail -n +2 /proc/net/route | wc -l" });
    expect(routes.stdout.trim()).toBe("0");
    const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const probe = `require("net").connect(${server.port}, "127.0.0.1").on("connect", () => { console.log("connected"); process.exit(0); }).on("error", (e) => { console.log(e.code); process.exit(0); })`;
      const result = await sandbox.exec({ command: ["node", "-e", probe], timeoutMs: 30_000 });
      expect(result.stdout.trim()).toBe("ECONNREFUSED");
    } finally {
      server.stop(true);
    }
  }, 60_000);

  test("PID namespace: the host's processes are invisible", async () => {
    const sandbox = await make(runtime);
    const result = await sandbox.exec({ command: `echo $$; test -e /proc/${process.pid} && echo host-visible || echo host-hidden` });
    const [pid, visibility] = result.stdout.trim().split("\n");
    expect(Number(pid)).toBeLessThan(10);
    expect(visibility).toBe("host-hidden");
  }, 30_000);

  test("a timeout kills the whole tree, background children included", async () => {
    const sandbox = await make(runtime);
    const result = await sandbox.exec({ command: "sleep 4241.5 & sleep 4241.5", timeoutMs: 1500 });
    expect(result.timed_out).toBe(true);
    expect(result.exit_code).toBeNull();
    expect(await hostProcesses(["sleep", "4241.5"])).toEqual([]);
  }, 30_000);

  test("an abort signal kills the tree", async () => {
    const sandbox = await make(runtime);
    const controller = new AbortController();
    const running = sandbox.exec({ command: "sleep 4242.5 & sleep 4242.5", signal: controller.signal });
    await Bun.sleep(500);
    controller.abort();
    const result = await running;
    expect(result.exit_code).toBeNull();
    expect(result.timed_out).toBe(false);
    expect(await hostProcesses(["sleep", "4242.5"])).toEqual([]);
  }, 30_000);

  test("destroy removes the work dir and kills what runs", async () => {
    const sandbox = await make(runtime);
    const running = sandbox.exec({ command: "sleep 4243.5" });
    await Bun.sleep(300);
    await sandbox.destroy();
    expect((await running).exit_code).toBeNull();
    expect(await sandbox.alive()).toBe(false);
    expect(existsSync(sandbox.hostRunDir)).toBe(false);
    await sandbox.destroy(); // idempotent
  }, 30_000);

  test("mounts: read-only and read-write binds at their sandbox paths", async () => {
    const ro = join(root, "ro-mount");
    await mkdir(ro, { recursive: true });
    await writeFile(join(ro, "tool.txt"), "tool");
    const sandbox = await make(runtime, {}, [{ host: ro, sandbox: "/polar/tools", readonly: true }]);
    const result = await sandbox.exec({ command: "cat /polar/tools/tool.txt; touch /polar/tools/x 2>/dev/null; echo rc=$?" });
    expect(result.stdout).toBe("toolrc=1\n");
    await expect(sandbox.putFiles({ "/polar/tools/y": "no" })).rejects.toThrow(PolarError);
    await sandbox.putFiles({ "/polar/run/sock-dir-file": "run" });
    expect(await readFile(join(sandbox.hostRunDir, "sock-dir-file"), "utf8")).toBe("run");
  }, 30_000);

  test("removeLeftovers kills a crashed node's processes and removes its work dirs", async () => {
    const crashed = createProcessRuntime({ root, warn: () => {} });
    const sandbox = await crashed.create({ spec: RuntimeSpec.parse({}), labels: { node_id: "node-crashed" } });
    const running = sandbox.exec({ command: "sleep 4244.5" });
    await Bun.sleep(500);
    const restarted = createProcessRuntime({ root, warn: () => {} });
    expect(await restarted.removeLeftovers("node-crashed")).toBe(1);
    expect((await running).exit_code).toBeNull();
    expect(await hostProcesses(["sleep", "4244.5"])).toEqual([]);
    expect(await readdir(join(root, "node-crashed"))).toEqual([]);
  }, 30_000);
});

describe("process runtime without bwrap", () => {
  test("still runs, in the work dir, and warns loudly on create", async () => {
    const warnings: string[] = [];
    const runtime = createProcessRuntime({ root, bwrap: null, warn: (m) => warnings.push(m) });
    expect(runtime.isolated).toBe(false);
    const sandbox = await make(runtime);
    expect(warnings.length).toBe(1);
    expect(warnings[0]).toContain("WITHOUT ISOLATION");
    await sandbox.putFiles({ "/work/a.txt": "plain" });
    const result = await sandbox.exec({ command: "cat a.txt; echo; pwd" });
    expect(result.exit_code).toBe(0);
    const [content, cwd] = result.stdout.split("\n");
    expect(content).toBe("plain");
    expect(cwd).toEndWith("/fs/work");
    expect(new TextDecoder().decode(await sandbox.readFile("/work/a.txt"))).toBe("plain");
    const timed = await sandbox.exec({ command: "sleep 4245.5 & sleep 4245.5", timeoutMs: 500 });
    expect(timed.timed_out).toBe(true);
    expect(await hostProcesses(["sleep", "4245.5"])).toEqual([]);
  }, 30_000);
});

describe("stdin and stdout together", () => {
  test("a large stdin echoed back does not deadlock", async () => {
    const runtime = createProcessRuntime({ root, bwrap: BWRAP ? undefined : null, warn: () => {} });
    const sandbox = await make(runtime);
    const input = "x".repeat(4 * 1024 * 1024);
    const result = await sandbox.exec({ command: "cat", stdin: input, timeoutMs: 60_000 });
    expect(result.timed_out).toBe(false);
    expect(result.stdout.length).toBe(input.length);
  }, 90_000);
});
