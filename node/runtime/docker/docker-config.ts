// Why: the one place where Polar's RuntimeSpec becomes a Docker container definition — the
// isolation defaults (no network, all capabilities dropped, no-new-privileges, the operator's
// pids limit and, where the engine's storage supports it, a disk limit) and the labels that let a
// restarted node find its own leftovers.
import type { ContainerCreateOptions } from "dockerode";
import { JOBS_IN_SANDBOX } from "../reader-job.ts";
import { DEFAULT_SANDBOX_LIMITS, effectivePidsLimit, type SandboxLimits } from "../sandbox-limits.ts";
import { SANDBOX_GATEWAY_DIR, SANDBOX_RUN_DIR, type Mount, type RuntimeSpec } from "../types.ts";

export const LABEL_NODE_ID = "polar.node_id";
export const LABEL_ROLLOUT_ID = "polar.rollout_id";
export const LABEL_SANDBOX_ID = "polar.sandbox_id";

export const DEFAULT_PIDS_LIMIT = DEFAULT_SANDBOX_LIMITS.pids;

export interface ContainerPlan {
  sandboxId: string;
  spec: RuntimeSpec;
  labels: { node_id: string; rollout_id?: string };
  mounts: Mount[];
  hostRunDir: string;
  /** Only the node writes here; the container sees it read-only (the gateway socket's folder). */
  hostGatewayDir: string;
  /** Only the node writes here; the container sees it read-only at JOBS_IN_SANDBOX (job scripts). */
  hostJobsDir: string;
  /** docker-init as PID 1 (reaps the zombies that agents' background processes leave). */
  init: boolean;
  /** The operator's limits; default DEFAULT_SANDBOX_LIMITS. */
  limits?: SandboxLimits;
  /** Ask for a writable layer of limits.diskMb (`--storage-opt size`: overlay2 on xfs with pquota only). */
  diskLimit?: boolean;
}

export function containerName(sandboxId: string): string {
  return `polar-${sandboxId}`;
}

export function containerOptions(plan: ContainerPlan): ContainerCreateOptions {
  const { spec } = plan;
  const labels: Record<string, string> = { [LABEL_NODE_ID]: plan.labels.node_id, [LABEL_SANDBOX_ID]: plan.sandboxId };
  if (plan.labels.rollout_id) labels[LABEL_ROLLOUT_ID] = plan.labels.rollout_id;
  const binds = [
    `${plan.hostRunDir}:${SANDBOX_RUN_DIR}:rw`,
    `${plan.hostJobsDir}:${JOBS_IN_SANDBOX}:ro`,
    `${plan.hostGatewayDir}:${SANDBOX_GATEWAY_DIR}:ro`,
    ...plan.mounts.map((m) => `${m.host}:${m.sandbox}:${m.readonly ? "ro" : "rw"}`),
  ];
  const memory = spec.memory_mb === undefined ? undefined : spec.memory_mb * 1024 * 1024;
  const limits = plan.limits ?? DEFAULT_SANDBOX_LIMITS;
  return {
    name: containerName(plan.sandboxId),
    Image: spec.image,
    // An idle PID that busybox and Debian both have; commands arrive later through exec.
    Entrypoint: ["sleep"],
    Cmd: ["infinity"],
    WorkingDir: spec.workdir,
    Env: Object.entries(spec.env).map(([k, v]) => `${k}=${v}`),
    Labels: labels,
    Tty: false,
    OpenStdin: false,
    AttachStdin: false,
    AttachStdout: false,
    AttachStderr: false,
    HostConfig: {
      Init: plan.init,
      NetworkMode: spec.network,
      Binds: binds,
      Memory: memory,
      MemorySwap: memory, // no swap beyond the limit
      NanoCpus: spec.cpus === undefined ? undefined : Math.round(spec.cpus * 1e9),
      PidsLimit: effectivePidsLimit(spec, limits),
      ...(plan.diskLimit ? { StorageOpt: { size: `${limits.diskMb}M` } } : {}),
      CapDrop: ["ALL"],
      CapAdd: spec.cap_add,
      SecurityOpt: ["no-new-privileges"],
      AutoRemove: false,
    },
  };
}
