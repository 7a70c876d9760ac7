// The isolation a RuntimeSpec asks for is what the container gets: memory, pids and CPU limits
// (engine config and the cgroup files inside), no network but lo, every capability dropped
// unless listed, no-new-privileges.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { containerName, DEFAULT_PIDS_LIMIT } from "./docker-config.ts";
import { BOOKWORM, BUSYBOX, dockerForTests, expectNoContainers, testNodeId } from "./docker-test-env.ts";
import { createDockerRuntime } from "./docker.ts";
import { RuntimeSpec, type Sandbox } from "./types.ts";
import type { RuntimeSpecInput } from "../../protocol/runtime.ts";

const docker = await dockerForTests("docker limits", [BUSYBOX, BOOKWORM]);
const T = 120_000;

/** The value of one cgroup file, v1 or v2 path. */
async function cgroupValue(sandbox: Sandbox, v1: string, v2: string): Promise<string> {
  const result = await sandbox.exec({ command: `cat /sys/fs/cgroup/${v1} 2>/dev/null || cat /sys/fs/cgroup/${v2}` });
  expect(result.exit_code).toBe(0);
  return result.stdout.trim();
}

function capEff(status: string): bigint {
  const line = status.split("\n").find((l) => l.startsWith("CapEff:"));
  return BigInt(`0x${(line ?? "").split(/\s+/)[1]}`);
}

if (docker) {
  describe("docker limits", () => {
    const nodeId = testNodeId("limits");
    let runRoot: string;
    const created: Sandbox[] = [];
    const make = async (spec: RuntimeSpecInput) => {
      const sandbox = await createDockerRuntime({ docker, runRoot }).create({ spec: RuntimeSpec.parse(spec), labels: { node_id: nodeId } });
      created.push(sandbox);
      return sandbox;
    };

    beforeAll(async () => {
      runRoot = await mkdtemp(join(tmpdir(), "polar-limits-test-"));
    });

    afterAll(async () => {
      await Promise.all(created.map((s) => s.destroy()));
      await expectNoContainers(docker, nodeId);
      await rm(runRoot, { recursive: true, force: true });
    }, T);

    test("memory, pids and cpus reach the engine and the cgroup", async () => {
      const sandbox = await make({ image: BUSYBOX, memory_mb: 64, pids_limit: 40, cpus: 0.5 });
      const host = (await docker.getContainer(containerName(sandbox.id)).inspect()).HostConfig;
      expect(host.Memory).toBe(64 * 1024 * 1024);
      expect(host.MemorySwap).toBe(64 * 1024 * 1024);
      expect(host.PidsLimit).toBe(40);
      expect(host.NanoCpus).toBe(500_000_000);
      expect(await cgroupValue(sandbox, "memory/memory.limit_in_bytes", "memory.max")).toBe(String(64 * 1024 * 1024));
      expect(await cgroupValue(sandbox, "pids/pids.max", "pids.max")).toBe("40");
    }, T);

    test("the pids limit stops a fork bomb short", async () => {
      const sandbox = await make({ image: BOOKWORM, pids_limit: 20 });
      const forker = [
        "import os, time",
        "n = 0",
        "try:",
        "    for _ in range(100):",
        "        if os.fork() == 0:",
        "            time.sleep(30)",
        "            os._exit(0)",
        "        n += 1",
        "except OSError as e:",
        "    print(n, e.errno)",
      ].join("\n");
      const result = await sandbox.exec({ command: ["python3", "-c", forker], timeoutMs: 60_000 });
      const [forked, errno] = result.stdout.trim().split(" ").map(Number);
      expect(errno).toBe(11); // EAGAIN: the cgroup refused the fork
      expect(forked).toBeGreaterThan(5);
      expect(forked).toBeLessThan(20);
    }, T);

    test("defaults: a pids limit, no network but lo, no capabilities, no-new-privileges", async () => {
      const sandbox = await make({ image: BUSYBOX });
      const host = (await docker.getContainer(containerName(sandbox.id)).inspect()).HostConfig;
      expect(host.PidsLimit).toBe(DEFAULT_PIDS_LIMIT);
      expect(host.NetworkMode).toBe("none");
      expect(host.CapDrop).toEqual(["ALL"]);
      expect(host.SecurityOpt).toEqual(["no-new-privileges"]);
      const net = await sandbox.exec({ command: "ls /sys/class/net" });
      expect(net.stdout.trim().split(/\s+/)).toEqual(["lo"]);
      const status = (await sandbox.exec({ command: "cat /proc/self/status" })).stdout;
      expect(capEff(status)).toBe(0n);
      expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
    }, T);

    test("cap_add keeps exactly the listed capabilities; network host is passed through", async () => {
      const sandbox = await make({ image: BUSYBOX, cap_add: ["NET_BIND_SERVICE"], network: "host" });
      const status = (await sandbox.exec({ command: "cat /proc/self/status" })).stdout;
      expect(capEff(status)).toBe(1n << 10n); // CAP_NET_BIND_SERVICE
      const host = (await docker.getContainer(containerName(sandbox.id)).inspect()).HostConfig;
      expect(host.NetworkMode).toBe("host");
    }, T);
  });
}
