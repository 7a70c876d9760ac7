// The host runner with real processes: a clean environment, closed stdin, and a timeout that
// reaches background children.
import { afterAll, expect, test } from "bun:test";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getHarness } from "./registry.ts";
import { runOnHost } from "./host-runner.ts";
import type { HarnessSpec } from "./types.ts";

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function commandSpec(script: string, timeoutMs = 30_000): Promise<HarnessSpec> {
  const root = await mkdtemp(join(tmpdir(), "polar-runner-"));
  roots.push(root);
  await mkdir(join(root, "work"));
  return {
    workDir: join(root, "work"),
    homeDir: join(root, "home"),
    model: "m",
    instruction: "do it",
    gateway: { openaiBaseUrl: "http://127.0.0.1:9/v1", anthropicBaseUrl: "http://127.0.0.1:9", token: "tok" },
    limits: { timeoutMs },
    options: { argv: ["sh", "-c", script] },
  };
}

function parseEnv(text: string): Map<string, string> {
  return new Map(
    text
      .split("\n")
      .filter((line) => line.includes("="))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
}

test("the environment is minimal plus the adapter's, never inherited", async () => {
  process.env.POLAR_RUNNER_TEST_SECRET = "leak";
  const spec = await commandSpec("env");
  const result = await runOnHost(getHarness("command"), spec, { extraEnv: { EXTRA: "1" } });
  delete process.env.POLAR_RUNNER_TEST_SECRET;
  const env = parseEnv(result.stdout);
  expect(result.exitCode).toBe(0);
  expect(env.has("POLAR_RUNNER_TEST_SECRET")).toBe(false);
  expect(env.get("HOME")).toBe(spec.homeDir);
  expect(env.get("OPENAI_API_KEY")).toBe("tok");
  expect(env.get("EXTRA")).toBe("1");
  expect(env.get("PWD")).toBe(spec.workDir);
});

test("stdin is closed", async () => {
  const result = await runOnHost(getHarness("command"), await commandSpec("cat; echo read-done"));
  expect(result.stdout.trim()).toBe("read-done");
});

test("a failing harness reports its stderr", async () => {
  const result = await runOnHost(getHarness("command"), await commandSpec("echo boom >&2; exit 3"));
  expect(result.exitCode).toBe(3);
  expect(result.error).toContain("boom");
});

test("the timeout kills the whole process group", async () => {
  const spec = await commandSpec("sleep 60 & echo $! > bg.pid; sleep 60", 2000); // room for sh to start under load
  const result = await runOnHost(getHarness("command"), spec, { killGraceMs: 100 });
  expect(result.timedOut).toBe(true);
  expect(result.error).toBe("harness timed out");
  const backgroundPid = Number(await readFile(join(spec.workDir, "bg.pid"), "utf8"));
  expect(backgroundPid).toBeGreaterThan(0);
  expect(await processState(backgroundPid)).toMatch(/^(gone|Z)$/);
});

/** "gone", or the state letter from /proc (a killed orphan may linger as a zombie "Z"). */
async function processState(pid: number): Promise<string> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] ?? "?";
  } catch {
    return "gone";
  }
}
