// A node killed with SIGKILL leaves labelled containers and run folders; started again with the
// same node id, removeLeftovers finds and removes exactly those (another node's stay).
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { BUSYBOX, containersOf, dockerForTests, expectNoContainers, testNodeId } from "./docker-test-env.ts";
import { createDockerRuntime } from "./docker.ts";
import { RuntimeSpec } from "./types.ts";

const docker = await dockerForTests("docker leftovers");
const T = 120_000;
const ChildReport = z.object({ sandbox_ids: z.array(z.string()) });

if (docker) {
  describe("docker leftovers", () => {
    const nodeId = testNodeId("leftovers");
    const otherNode = testNodeId("other");
    let runRoot = "";

    afterAll(async () => {
      const runtime = createDockerRuntime({ docker, runRoot });
      await runtime.removeLeftovers(nodeId);
      await runtime.removeLeftovers(otherNode);
      if (runRoot) await rm(runRoot, { recursive: true, force: true });
    }, T);

    test("SIGKILLed node, started again: its leftovers are removed, nothing else", async () => {
      runRoot = await mkdtemp(join(tmpdir(), "polar-leftovers-test-"));
      const other = await createDockerRuntime({ docker, runRoot }).create({ spec: RuntimeSpec.parse({ image: BUSYBOX }), labels: { node_id: otherNode } });

      const child = Bun.spawn(["bun", join(import.meta.dir, "fixtures", "leftover-child.ts"), nodeId, runRoot, BUSYBOX, "3"], {
        stdout: "pipe",
        stderr: "inherit",
      });
      const reader = child.stdout.getReader();
      let text = "";
      while (!text.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      const report = ChildReport.parse(JSON.parse(text));
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
    }, T);
  });
}
