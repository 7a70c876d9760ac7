// Why: the evaluator tests run the same scenarios in both runtimes: process (bwrap on the host)
// always, Docker when an engine and the Debian test image are there (skipped visibly otherwise,
// failing under POLAR_REQUIRE_DOCKER=1).
import { BOOKWORM, dockerForTests, testNodeId } from "./docker-test-env.ts";
import { createDockerRuntime } from "../../../node/runtime/docker/docker.ts";
import { createProcessRuntime } from "../../../node/runtime/process/process.ts";
import type { RuntimeBackend, SandboxRuntime } from "../../../node/runtime/types.ts";

export interface TestRuntime {
  name: RuntimeBackend;
  runtime: SandboxRuntime;
  nodeId: string;
}

export async function runtimesForTests(suite: string): Promise<TestRuntime[]> {
  const runtimes: TestRuntime[] = [{ name: "process", runtime: createProcessRuntime({ warn: () => {} }), nodeId: testNodeId(`${suite}-p`) }];
  const docker = await dockerForTests(`${suite} (docker)`, [BOOKWORM]);
  if (docker) runtimes.push({ name: "docker", runtime: createDockerRuntime({ docker }), nodeId: testNodeId(`${suite}-d`) });
  return runtimes;
}
