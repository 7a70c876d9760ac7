// The pool is runtime-independent: the same demand, warm hand-out, release and close over the
// process runtime (bwrap), leaving no sandbox folder behind.
import { afterAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findBwrap } from "./process/bwrap.ts";
import { createSandboxPool, poolKey } from "./pool.ts";
import { createProcessRuntime } from "./process/process.ts";
import { RuntimeSpec, type PoolEvent } from "./types.ts";

const root = await mkdtemp(join(tmpdir(), "polar-pool-process-"));
afterAll(() => rm(root, { recursive: true, force: true }));

const run = findBwrap() || process.env.POLAR_REQUIRE_BWRAP === "1" ? test : test.skip;
run(
  `pool over the process runtime${findBwrap() ? "" : " [SKIPPED: bwrap not installed]"}`,
  async () => {
    const nodeId = "pool-process-test";
    const pool = createSandboxPool({ runtime: createProcessRuntime({ root }), nodeId, healthCheckMs: 0, prepareInPool: true });
    const spec = RuntimeSpec.parse({ prepare: [{ type: "upload_file", path: "task.txt", content: "prepared" }] });
    const key = poolKey(spec, true);
    const events: PoolEvent[] = [];
    pool.onEvent((e) => events.push(e));
    pool.setDemand(spec, 2);
    for (let i = 0; i < 400 && pool.warm()[key] !== 2; i++) await Bun.sleep(25);
    expect(pool.warm()[key]).toBe(2);

    const sandbox = await pool.take(spec, { rollout_id: "r-1" });
    expect(events.find((e) => e.type === "taken")).toMatchObject({ sandbox_id: sandbox.id, warm: true });
    expect((await sandbox.exec({ command: "cat task.txt" })).stdout).toBe("prepared");
    await pool.release(sandbox);
    expect(await sandbox.alive()).toBe(false);
    expect(existsSync(sandbox.hostRunDir)).toBe(false);

    await pool.close();
    expect(await readdir(join(root, nodeId))).toEqual([]);
  },
  120_000,
);
