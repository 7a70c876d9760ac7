// Why: how much a sandbox may take of its host — processes and writable space — is the node
// operator's setting (config `sandbox.pids_limit`, `sandbox.disk_mb`), the same for both runtimes;
// a request's own `pids_limit` may only lower it.
import type { RuntimeSpec } from "./types.ts";

export interface SandboxLimits {
  /** Processes (and threads) a sandbox may have at once. */
  pids: number;
  /** Writable space of a sandbox, in MiB. */
  diskMb: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = { pids: 512, diskMb: 1024 };

/** The sandbox's process limit: the request's pids_limit when it is lower than the operator's. */
export function effectivePidsLimit(spec: Pick<RuntimeSpec, "pids_limit">, limits: SandboxLimits): number {
  return Math.min(spec.pids_limit ?? limits.pids, limits.pids);
}
