// Why: real engines, real CLIs and real files take longer than Bun's 5 s default per test on a
// busy machine, and Bun 1.4 ignores bunfig's `[test] timeout`; bunfig preloads this file for
// every `bun test` run from the repository root, and setDefaultTimeout is what Bun honours.
import { setDefaultTimeout } from "bun:test";

/** Default per-test timeout; slow tests (servers, containers, CLIs) still set their own. */
export const DEFAULT_TEST_TIMEOUT_MS = 60_000;

setDefaultTimeout(DEFAULT_TEST_TIMEOUT_MS);
