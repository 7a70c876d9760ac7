// Why: the public surface of node/harness — adapters, registry, the host and sandbox runners.
export * from "./types.ts";
export { HARNESS_KINDS, getHarness, isHarnessKind, type HarnessKind } from "./registry.ts";
export { defaultInstallDir, pinnedBinary, pinnedVersion, PINNED_CLIS, type PinnedCli } from "./common.ts";
export { runOnHost, baseEnv, hostPath, type HostRunOptions, type HostRunResult } from "./host-runner.ts";
export { runInSandbox, gatewaySocketFolder, SANDBOX_HOME_DIR, DEFAULT_BRIDGE_PORT, type SandboxHarnessRun, type SandboxRunResult } from "./sandbox-runner.ts";
export { harnessMounts, SANDBOX_NODE_BIN, SANDBOX_BUN_BIN, type HarnessMountOptions } from "./sandbox-mounts.ts";
