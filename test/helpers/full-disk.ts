// Why: the full-disk tests of both services (a node's store, a coordinator's) put a store on a
// small tmpfs, fill it to ENOSPC, run a command task held on a gate file, and need root and bwrap
// for that: one copy of each.
import { closeSync, openSync, writeSync } from "node:fs";
import { describe, test } from "bun:test";
import { findBwrap } from "../../node/runtime/process/bwrap.ts";

/** `describe`, or `describe.skip` with a test naming why — unless POLAR_REQUIRE_TMPFS=1, which fails instead. */
export function describeOnTmpfs(what: string): typeof describe | typeof describe.skip {
  const root = process.getuid?.() === 0;
  if ((root && findBwrap()) || process.env.POLAR_REQUIRE_TMPFS === "1") return describe;
  test.skip(`${what} [SKIPPED: ${root ? "bwrap not installed" : "mounting a tmpfs needs root"}; POLAR_REQUIRE_TMPFS=1 fails instead]`, () => {});
  return describe.skip;
}

/** A rollout-API task running `argv` with the command harness on the process runtime. */
export function commandTask(id: string, script: string, argv = ["/bin/sh", "-c", script], samples = 1) {
  return {
    task_id: id,
    instruction: "write",
    num_samples: samples,
    agent: { harness: "command", settings: { argv } },
    runtime: { backend: "process" },
    evaluator: { strategy: "session_completed" },
    metadata: { agent_timeout: 120 },
  };
}

/** Fills the file system under `path` until ENOSPC; returns the bytes written. */
export function fill(path: string): number {
  const fd = openSync(path, "w");
  const chunk = Buffer.alloc(64 * 1024, 0x7a);
  let written = 0;
  try {
    for (;;) written += writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
  } finally {
    closeSync(fd);
  }
  return written;
}
