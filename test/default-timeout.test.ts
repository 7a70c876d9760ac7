// The default per-test timeout set by test/preload.ts (via bunfig.toml) is in force: this test
// gives no timeout of its own and outlives Bun's built-in 5 s default. It sleeps (no CPU).
import { expect, test } from "bun:test";
import { DEFAULT_TEST_TIMEOUT_MS } from "./preload.ts";

const BUN_DEFAULT_TIMEOUT_MS = 5_000;

test("a test without its own timeout may run past Bun's 5 s default", async () => {
  const started = performance.now();
  await Bun.sleep(BUN_DEFAULT_TIMEOUT_MS + 500);
  expect(performance.now() - started).toBeGreaterThan(BUN_DEFAULT_TIMEOUT_MS);
  expect(DEFAULT_TEST_TIMEOUT_MS).toBeGreaterThan(BUN_DEFAULT_TIMEOUT_MS + 500);
});
