// Prepare actions (written once over the Sandbox interface) on the process runtime under bwrap:
// the same task setup as on Docker, with relative paths resolved in the workdir.
import { afterAll, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findBwrap } from "./bwrap.ts";
import { expectUploadsAndRetriedExec, writePrepareSources } from "../prepare-case.ts";
import { createProcessRuntime } from "./process.ts";
import { RuntimeSpec } from "../types.ts";

const root = await mkdtemp(join(tmpdir(), "polar-proc-prepare-"));
afterAll(() => rm(root, { recursive: true, force: true }));

const run = findBwrap() || process.env.POLAR_REQUIRE_BWRAP === "1" ? test : test.skip;
run(
  `prepare actions in a process sandbox${findBwrap() ? "" : " [SKIPPED: bwrap not installed]"}`,
  async () => {
    const host = join(root, "src");
    await writePrepareSources(host);
    const sandbox = await createProcessRuntime({ root: join(root, "runtime") }).create({
      spec: RuntimeSpec.parse({ backend: "process" }),
      labels: { node_id: "prepare" },
    });
    try {
      await expectUploadsAndRetriedExec(sandbox, host);
    } finally {
      await sandbox.destroy();
    }
  },
  60_000,
);
