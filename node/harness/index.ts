// Why: the public surface of node/harness — adapters, registry and the host runner.
export * from "./types.ts";
export { HARNESS_KINDS, getHarness, isHarnessKind, type HarnessKind } from "./registry.ts";
export { defaultInstallDir, pinnedBinary, pinnedVersion, PINNED_CLIS, type PinnedCli } from "./common.ts";
export { runOnHost, baseEnv, hostPath, type HostRunOptions, type HostRunResult } from "./host-runner.ts";
