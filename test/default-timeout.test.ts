// The project's test command (`bun run test`, package.json's `test` script) gives every test a
// default timeout over Bun's 5 s: Bun 1.4 ignores bunfig's `[test] timeout`, and a preload's
// setDefaultTimeout reaches only the first test file, so the command passes `--timeout`.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";

const BUN_DEFAULT_TIMEOUT_MS = 5_000;
const PackageJson = z.object({ scripts: z.object({ test: z.string() }) });
const testScript = PackageJson.parse(JSON.parse(readFileSync(resolve(import.meta.dir, "../package.json"), "utf8"))).scripts.test;
/** Set by `bun run test`; a bare `bun test <paths>` runs under Bun's own default. */
const viaProjectCommand = process.env.npm_lifecycle_event === "test";

describe("default per-test timeout", () => {
  test("the test script passes a --timeout well over Bun's 5 s default", () => {
    const match = /^bun test --timeout (\d+)\b/.exec(testScript);
    expect(match).not.toBeNull();
    expect(Number(match![1])).toBeGreaterThanOrEqual(60_000);
  });

  // Sleeps (no CPU) past Bun's default with no timeout of its own.
  test.if(viaProjectCommand)("under `bun run test`, a test without its own timeout may run past 5 s", async () => {
    const started = performance.now();
    await Bun.sleep(BUN_DEFAULT_TIMEOUT_MS + 500);
    expect(performance.now() - started).toBeGreaterThan(BUN_DEFAULT_TIMEOUT_MS);
  });
});
