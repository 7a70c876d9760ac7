// The runtime registry as a fresh process sees it: choosing the process runtime (and loading
// everything `polar node`, `polar demo` and `polar tasks validate` load) never loads dockerode,
// whose tree carries native addons Bun cannot load everywhere; choosing docker does. Without
// bwrap, `polar demo` says in one line what to install; the no-isolation warning of a process
// runtime that is allowed to run without bwrap is printed once per process, not per sandbox.
import { describe, expect, test } from "bun:test";
import { dirname, join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");

/** Runs a script in a fresh `bun` process at the repository root. */
function bunEval(script: string, env: Record<string, string | undefined> = process.env): { code: number; stdout: string; stderr: string } {
  const run = Bun.spawnSync([process.execPath, "-e", script], { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
  return { code: run.exitCode ?? -1, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

/** Prints, as JSON, the dockerode files loaded after `body` ran (CommonJS modules are in require.cache). */
const LOADED_DOCKERODE = `console.log(JSON.stringify(Object.keys(require.cache).filter((k) => k.includes("/node_modules/dockerode/"))));`;

describe("runtime registry", () => {
  test("the process runtime and every module polar node, demo and tasks validate load by default never load dockerode", () => {
    const run = bunEval(`
      const registry = await import("./node/runtime/registry.ts");
      await import("./node/main.ts");
      await import("./node/node-cli.ts");
      await import("./node/demo/cli.ts");
      await import("./node/eval/cli.ts");
      await import("./node/cluster.ts");
      const runtime = await registry.openRuntime("process", { allowUnisolated: true });
      const sandbox = await runtime.create({ spec: { image: "any", workdir: "/work", env: {}, network: "none", cap_add: [], prepare: [] }, labels: { node_id: "registry-test-" + process.pid, rollout_id: "r" } });
      await sandbox.exec({ command: "true" });
      await sandbox.destroy();
      ${LOADED_DOCKERODE}
    `);
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(JSON.parse(lines[lines.length - 1]!)).toEqual([]);
  }, 60_000);

  test("choosing docker loads it (the check above can see dockerode when it is there)", () => {
    const run = bunEval(`
      const registry = await import("./node/runtime/registry.ts");
      await registry.openRuntime("docker").catch(() => {}); // no engine is fine: the module is loaded first
      ${LOADED_DOCKERODE}
    `);
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout.trim().split("\n").pop()!) as string[]).length).toBeGreaterThan(0);
  }, 60_000);

  test("polar demo on a host without bwrap: one line naming what to install, exit 2, nothing started", () => {
    // A PATH that holds bun and the system tools but no bwrap: what Polar sees on a host without it.
    const bin = Bun.spawnSync(["mktemp", "-d"]).stdout.toString().trim();
    for (const tool of ["git", "node", "python3", "sh"]) {
      const path = Bun.which(tool);
      if (path) Bun.spawnSync(["ln", "-s", path, join(bin, tool)]);
    }
    const run = Bun.spawnSync([process.execPath, join(ROOT, "bin/polar.ts"), "demo"], {
      cwd: ROOT,
      env: { ...process.env, PATH: `${dirname(process.execPath)}:${bin}` },
      stdout: "pipe",
      stderr: "pipe",
    });
    Bun.spawnSync(["rm", "-rf", bin]);
    const stderr = run.stderr.toString().trim().split("\n");
    expect(run.exitCode).toBe(2);
    expect(stderr).toHaveLength(1);
    expect(stderr[0]).toStartWith("the process runtime needs bwrap, which is not installed: install bubblewrap");
    expect(run.stdout.toString()).toBe("");
  }, 60_000);

  test("a process runtime allowed to run without bwrap warns once per process, however many sandboxes it creates", () => {
    const run = bunEval(`
      const { createProcessRuntime } = await import("./node/runtime/process/process.ts");
      const runtime = createProcessRuntime({ bwrap: null });
      for (let i = 0; i < 4; i++) {
        const sandbox = await runtime.create({ spec: { image: "any", workdir: "/work", env: {}, network: "none", cap_add: [], prepare: [] }, labels: { node_id: "warn-test-" + process.pid, rollout_id: "r" + i } });
        await sandbox.destroy();
      }
    `);
    expect(run.code).toBe(0);
    const lines = run.stderr.split("\n").filter((l) => l.trim() !== "");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith("WARNING: polar process sandbox WITHOUT ISOLATION");
  }, 60_000);
});
