// The isolation a RuntimeSpec asks for is what the container gets: memory, pids and CPU limits
// (engine config and the cgroup files inside), no network but lo, every capability dropped
// unless listed, no-new-privileges — within the operator's policy and limits: a runtime built
// with a policy refuses network host and capabilities it does not grant, a request's pids_limit
// only lowers the operator's, and a disk limit is asked for where the engine's storage allows.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { containerName, DEFAULT_PIDS_LIMIT } from "./docker-config.ts";
import { BOOKWORM, BUSYBOX, dockerForTests, expectNoContainers, testNodeId } from "../../../test/support/runtime/docker-test-env.ts";
import { createDockerRuntime } from "./docker.ts";
import { sandboxPolicy } from "../sandbox-policy.ts";
import { RuntimeSpec, type Sandbox } from "../types.ts";
import { PolarError } from "../../../protocol/errors.ts";
import type { RuntimeSpecInput } from "../../../protocol/runtime.ts";

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

    test(
      "memory, pids and cpus reach the engine and the cgroup",
      async () => {
        const sandbox = await make({ image: BUSYBOX, memory_mb: 64, pids_limit: 40, cpus: 0.5 });
        const host = (await docker.getContainer(containerName(sandbox.id)).inspect()).HostConfig;
        expect(host.Memory).toBe(64 * 1024 * 1024);
        expect(host.MemorySwap).toBe(64 * 1024 * 1024);
        expect(host.PidsLimit).toBe(40);
        expect(host.NanoCpus).toBe(500_000_000);
        expect(await cgroupValue(sandbox, "memory/memory.limit_in_bytes", "memory.max")).toBe(String(64 * 1024 * 1024));
        expect(await cgroupValue(sandbox, "pids/pids.max", "pids.max")).toBe("40");
      },
      T,
    );

    test(
      "the pids limit stops a fork bomb short",
      async () => {
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
      },
      T,
    );

    test(
      "defaults: a pids limit, no network but lo, no capabilities, no-new-privileges",
      async () => {
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
      },
      T,
    );

    test(
      "cap_add keeps exactly the listed capabilities; network host is passed through",
      async () => {
        const sandbox = await make({ image: BUSYBOX, cap_add: ["NET_BIND_SERVICE"], network: "host" });
        const status = (await sandbox.exec({ command: "cat /proc/self/status" })).stdout;
        expect(capEff(status)).toBe(1n << 10n); // CAP_NET_BIND_SERVICE
        const host = (await docker.getContainer(containerName(sandbox.id)).inspect()).HostConfig;
        expect(host.NetworkMode).toBe("host");
      },
      T,
    );

    test(
      "a runtime with the operator's policy refuses network host and ungranted capabilities before any container exists",
      async () => {
        const guarded = createDockerRuntime({ docker, runRoot, policy: sandboxPolicy({ hostPathRoots: [], allowCapAdd: ["NET_BIND_SERVICE"] }) });
        const refusedNode = testNodeId("refused");
        for (const spec of [
          { image: BUSYBOX, network: "host" },
          { image: BUSYBOX, cap_add: ["SYS_ADMIN"] },
          { image: BUSYBOX, cap_add: ["ALL"] },
        ] as RuntimeSpecInput[]) {
          const err = await guarded.create({ spec: RuntimeSpec.parse(spec), labels: { node_id: refusedNode } }).catch((e: unknown) => e);
          expect(err).toBeInstanceOf(PolarError);
          expect((err as PolarError).code).toBe("forbidden");
        }
        await expectNoContainers(docker, refusedNode);
        const granted = await guarded.create({ spec: RuntimeSpec.parse({ image: BUSYBOX, cap_add: ["net_bind_service"] }), labels: { node_id: nodeId } });
        created.push(granted);
        expect(capEff((await granted.exec({ command: "cat /proc/self/status" })).stdout)).toBe(1n << 10n);
      },
      T,
    );

    test(
      "the operator's pids limit caps a request's; a disk limit where the engine supports one, said once where it does not",
      async () => {
        const warnings: string[] = [];
        const limited = createDockerRuntime({ docker, runRoot, limits: { pids: 30, diskMb: 100 }, warn: (m) => warnings.push(m) });
        const asked = async (spec: RuntimeSpecInput) => {
          const sandbox = await limited.create({ spec: RuntimeSpec.parse(spec), labels: { node_id: nodeId } });
          created.push(sandbox);
          return (await docker.getContainer(containerName(sandbox.id)).inspect()).HostConfig;
        };
        expect((await asked({ image: BUSYBOX, pids_limit: 1000 })).PidsLimit).toBe(30);
        const lower = await asked({ image: BUSYBOX, pids_limit: 10 });
        expect(lower.PidsLimit).toBe(10);
        const info = await docker.info();
        const backing = (info.DriverStatus as [string, string][]).find(([k]) => k === "Backing Filesystem")?.[1];
        console.log(`docker storage: ${info.Driver} on ${backing}; disk limit ${warnings.length === 0 ? "enforced" : "not supported"}`);
        if (warnings.length === 0) {
          expect(lower.StorageOpt).toEqual({ size: "100M" });
        } else {
          // overlay2 on extfs (this machine): the engine refuses --storage-opt; told once, containers still start.
          expect(warnings).toEqual([expect.stringContaining("no disk limit")]);
          expect(lower.StorageOpt ?? null).toBeNull();
        }
      },
      T,
    );
  });
}
