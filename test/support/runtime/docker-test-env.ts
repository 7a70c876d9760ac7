// Why: every Docker test file needs the same gate — run on a real engine, skip with a visible
// reason without one, fail instead when CI requires Docker (POLAR_REQUIRE_DOCKER=1) — and the
// same cleanup check that nothing labelled with the test's node id is left behind.
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import type Docker from "dockerode";
import { LABEL_NODE_ID } from "../../../node/runtime/docker/docker-config.ts";
import { probeDocker } from "../../../node/runtime/docker/docker-probe.ts";

export const BUSYBOX = "polar-busybox:latest";
export const BOOKWORM = "polar-bookworm:dev";

/** The engine, or null after registering a skipped (or, when required, failing) test. */
export async function dockerForTests(suite: string, images: string[] = [BUSYBOX]): Promise<Docker | null> {
  const probe = await probeDocker(images);
  if (probe.ok) return probe.docker;
  if (process.env.POLAR_REQUIRE_DOCKER === "1") {
    test(`${suite} [POLAR_REQUIRE_DOCKER=1]`, () => {
      throw new Error(probe.reason);
    });
  } else {
    test.skip(`${suite} [SKIPPED: ${probe.reason}]`, () => {});
  }
  return null;
}

export function testNodeId(prefix: string): string {
  return `test-${prefix}-${randomBytes(4).toString("hex")}`;
}

export async function containersOf(docker: Docker, nodeId: string): Promise<Docker.ContainerInfo[]> {
  return docker.listContainers({ all: true, filters: { label: [`${LABEL_NODE_ID}=${nodeId}`] } });
}

export async function expectNoContainers(docker: Docker, nodeId: string): Promise<void> {
  expect((await containersOf(docker, nodeId)).map((c) => c.Names)).toEqual([]);
}
