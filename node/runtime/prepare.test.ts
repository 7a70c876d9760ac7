// Prepare actions over a real Docker sandbox: file uploads (text, base64, host source, mode),
// a folder upload, exec with retries, and a failing step that names itself.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PolarError } from "../../protocol/errors.ts";
import { BUSYBOX, dockerForTests, expectNoContainers, testNodeId } from "../../test/support/runtime/docker-test-env.ts";
import { createDockerRuntime } from "./docker/docker.ts";
import { prepareSandbox } from "./prepare.ts";
import { expectUploadsAndRetriedExec, writePrepareSources } from "./prepare-case.ts";
import { PrepareAction, RuntimeSpec, type Sandbox } from "./types.ts";

const docker = await dockerForTests("prepare actions");
const T = 120_000;

if (docker) {
  describe("prepare actions", () => {
    const nodeId = testNodeId("prepare");
    let runRoot: string;
    let host: string;
    let sandbox: Sandbox;

    beforeAll(async () => {
      runRoot = await mkdtemp(join(tmpdir(), "polar-prepare-test-"));
      host = await mkdtemp(join(tmpdir(), "polar-prepare-src-"));
      await writePrepareSources(host);
      sandbox = await createDockerRuntime({ docker, runRoot }).create({
        spec: RuntimeSpec.parse({ image: BUSYBOX, workdir: "/work" }),
        labels: { node_id: nodeId },
      });
    }, T);

    afterAll(async () => {
      await sandbox.destroy();
      await expectNoContainers(docker, nodeId);
      await rm(runRoot, { recursive: true, force: true });
      await rm(host, { recursive: true, force: true });
    }, T);

    test(
      "uploads and an exec retried until it succeeds",
      async () => {
        await expectUploadsAndRetriedExec(sandbox, host);
      },
      T,
    );

    test(
      "an exec that keeps failing throws after max_attempts, with its output",
      async () => {
        const action = PrepareAction.parse({ type: "exec", command: "echo attempt >> /tmp/count; echo bad >&2; exit 4", max_attempts: 2 });
        const err = await prepareSandbox(sandbox, [action]).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(PolarError);
        expect((err as PolarError).details).toMatchObject({ exit_code: 4, timed_out: false, stderr_tail: "bad\n" });
        const count = await sandbox.exec({ command: "wc -l < /tmp/count" });
        expect(count.stdout.trim()).toBe("2");
      },
      T,
    );

    test(
      "a timed-out exec step reports the timeout",
      async () => {
        const action = PrepareAction.parse({ type: "exec", command: ["sleep", "60"], timeout_seconds: 0.3 });
        const err = await prepareSandbox(sandbox, [action]).catch((e: unknown) => e);
        expect((err as PolarError).details).toMatchObject({ exit_code: null, timed_out: true });
      },
      T,
    );
  });
}
