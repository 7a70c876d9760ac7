// A node killed with SIGKILL leaves labelled containers and run folders; started again with the
// same node id, removeLeftovers finds and removes exactly those (another node's stay). A node
// that gets SIGTERM and closes its pool leaves nothing.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { BUSYBOX, containersOf, dockerForTests, expectNoContainers, testNodeId } from "../../../test/support/runtime/docker-test-env.ts";
import { createDockerRuntime } from "./docker.ts";
import { RuntimeSpec } from "../types.ts";

const docker = await dockerForTests("docker leftovers");
const T = 120_000;
const ChildReport = z.object({ sandbox_ids: z.array(z.string()) });
const PoolChildReport = z.object({ taken: z.string() });

/** The first line a child prints. */
async function firstLine(child: Bun.Subprocess<"ignore", "pipe", "inherit">): Promise<string> {
  const reader = child.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return text;
}

if (docker) {
  describe("docker leftovers", () => {
    const nodeId = testNodeId("leftovers");
    const otherNode = testNodeId("other");
    const termNode = testNodeId("sigterm");
    let runRoot = "";

    afterAll(async () => {
      const runtime = createDockerRuntime({ docker, runRoot });
      await runtime.removeLeftovers(nodeId);
      await runtime.removeLeftovers(otherNode);
      await runtime.removeLeftovers(termNode);
      if (runRoot) await rm(runRoot, { recursive: true, force: true });
    }, T);

    test(
      "SIGKILLed node, started again: its leftovers are removed, nothing else",
      async () => {
        runRoot = await mkdtemp(join(tmpdir(), "polar-leftovers-test-"));
        const other = await createDockerRuntime({ docker, runRoot }).create({ spec: RuntimeSpec.parse({ image: BUSYBOX }), labels: { node_id: otherNode } });

        const child = Bun.spawn(["bun", join(import.meta.dir, "fixtures", "leftover-child.ts"), nodeId, runRoot, BUSYBOX, "3"], {
          stdin: "ignore",
          stdout: "pipe",
          stderr: "inherit",
        });
        const report = ChildReport.parse(JSON.parse(await firstLine(child)));
        expect(report.sandbox_ids.length).toBe(3);
        child.kill("SIGKILL");
        await child.exited;

        const left = await containersOf(docker, nodeId);
        expect(left.map((c) => c.Labels["polar.sandbox_id"]).sort()).toEqual([...report.sandbox_ids].sort());
        expect(left.every((c) => c.State === "running")).toBe(true);
        expect((await readdir(join(runRoot, nodeId))).sort()).toEqual([...report.sandbox_ids].sort());

        // The node's next life.
        const removed = await createDockerRuntime({ docker, runRoot }).removeLeftovers(nodeId);
        expect(removed).toBe(3);
        await expectNoContainers(docker, nodeId);
        expect(await readdir(join(runRoot, nodeId))).toEqual([]);
        expect(await other.alive()).toBe(true);
        expect(existsSync(other.hostRunDir)).toBe(true);
        await other.destroy();
        await expectNoContainers(docker, otherNode);
      },
      T,
    );

    test(
      "SIGTERM: a node that closes its pool leaves no container, even with starts in flight",
      async () => {
        const child = Bun.spawn(["bun", join(import.meta.dir, "fixtures", "pool-child.ts"), termNode, runRoot, BUSYBOX], {
          stdin: "ignore",
          stdout: "pipe",
          stderr: "inherit",
        });
        const report = PoolChildReport.parse(JSON.parse(await firstLine(child)));
        const before = await containersOf(docker, termNode);
        expect(before.map((c) => c.Labels["polar.sandbox_id"])).toContain(report.taken);
        child.kill("SIGTERM");
        expect(await child.exited).toBe(0);
        await expectNoContainers(docker, termNode);
        expect(await readdir(join(runRoot, termNode))).toEqual([]);
      },
      T,
    );
  });
}
